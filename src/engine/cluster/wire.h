// Internal to the cluster protocol (remote_cluster.h): message header layouts and the float32 wire
// conversions. The tags are in message_tags.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "pacer/core/error.h"
#include "pacer/engine/cluster/message_tags.h"

namespace pacer::cluster {

struct JobHeader {
  // kSave: send your state (the worker answers a ReplyHeader kState, then the bytes). kLoad: your
  // state follows, model_size bytes on kTagState (the worker answers a ReplyHeader kState with no
  // bytes). Neither is followed by a model.
  enum Kind : int64_t { kJob = 0, kStop = 1, kSave = 2, kLoad = 3 };
  int64_t kind = kJob;
  int64_t tag = 0;
  int64_t model_size = 0;  // kJob: values of the model that follows; kLoad: bytes of the state
  int64_t stop_status = 0;
  // Stop: 1 when rank 0 has declared this worker lost. Rank 0 then waits for nothing more from
  // it, so the worker leaves at once, without waiting for its own sends or saying goodbye.
  int64_t lost = 0;
  // kJob: bytes per value of the model that follows, 8 (double) or 4 (float32: sent only to a
  // worker that said it reads its model in float32, ReplyHeader::model_bytes).
  int64_t model_bytes = 8;
};

struct ReplyHeader {
  // kState answers kSave or kLoad: payload_size bytes of state follow on kTagState (kSave; none
  // after kLoad), or, when trailer_bytes > 0, the trailer says why the worker could not save or
  // load its state and nothing follows.
  enum Kind : int64_t { kReply = 0, kError = 1, kBye = 2, kState = 3 };
  int64_t kind = kReply;
  int64_t tag = 0;
  int64_t payload_size = 0;   // kReply: values of the payload; kState: bytes of the state
  int64_t trailer_bytes = 0;  // versions (8 bytes each), error text, or WorkerStats
  // kReply: bytes per value of the payload that follows: 4 (float32) when the worker reads its
  // model in float32 and every value of the payload is exactly a float, else 8 (double); and the
  // precision in which the worker reads its model (Worker::model_precision): 4 = rank 0 may send
  // it float32 from then on, 8 = double.
  int64_t payload_bytes = 8;
  int64_t model_bytes = 8;
  double loss = 0;
  double units = 0;
  double job_time = 0;       // wall seconds from receiving the job to sending the reply
  double compute_time = 0;   // of which inside the worker half
  double injected_time = 0;  // of which slept by delay injection
};

static_assert(std::is_trivially_copyable_v<ReplyHeader> && sizeof(ReplyHeader) == 88);
static_assert(std::is_trivially_copyable_v<JobHeader> && sizeof(JobHeader) == 48);

// Room after a ReplyHeader: at least this many bytes, and room for 8 bytes per version.
constexpr int64_t kMinTrailerBytes = 4096;

// Wire precision. Values travel as doubles, or as floats where that loses nothing (JobHeader,
// ReplyHeader): a float32 model's x, rounded as the model itself rounds it, and payloads whose
// values are all exactly floats. A buffer of n doubles receives either; floats land in its first
// 4n bytes and are widened in place.

// Writes static_cast<float>(from[i]) into to[i] for i < n; returns whether every value survived
// exactly (a NaN does not). Stops at the first value that does not.
bool narrow_exact(const double* from, int64_t n, float* to);
// Writes static_cast<float>(from[i]) into to[i] for i < n (round to nearest, as the models do).
void narrow(const double* from, int64_t n, float* to);
// `data` holds n floats in its first 4n bytes (and has room for n doubles): widens them to the n
// doubles, in place.
void widen_in_place(double* data, int64_t n);

}  // namespace pacer::cluster
