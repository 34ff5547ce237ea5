// The message tags of every engine on the cluster protocol (remote_cluster.h): the protocol's run
// messages, and the MPI engine's session messages (engine/mpi/runtime.h), kept in one table so
// that no two kinds of message share a tag.
#pragma once

namespace pacer::cluster {

enum Tag : int {
  kTagCommand = 101,  // rank 0 -> worker rank: run (with the config) or exit
  kTagSetup = 102,    // worker rank -> rank 0: setup report (empty = ready, else the error)
  kTagGo = 103,       // rank 0 -> worker rank: go (1) or abort (0) the run
  kTagHello = 104,    // start-up handshake: worker rank -> rank 0, then rank 0 -> worker rank
  kTagJob = 111,      // rank 0 -> worker: JobHeader
  kTagModel = 112,    // rank 0 -> worker: the model x
  kTagReply = 113,    // worker -> rank 0: ReplyHeader + trailer
  kTagPayload = 114,  // worker -> rank 0: the payload
  // Checkpoints: a worker half's state, both ways (rank 0 -> worker after a load request, worker
  // -> rank 0 after a save request), as the bytes of a core/state.h archive.
  kTagState = 115,
};

const char* tag_name(int tag);

}  // namespace pacer::cluster
