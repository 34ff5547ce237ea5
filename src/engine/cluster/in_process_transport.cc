#include "pacer/engine/cluster/in_process_transport.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <vector>

#include "pacer/core/error.h"
#include "wire.h"

namespace pacer::cluster {
namespace {

// A posted receive. It belongs to the receiving endpoint's box, whose mutex guards it.
struct Receive {
  void* buffer = nullptr;
  int64_t capacity = 0;
  int source = kAnySource;
  int tag = 0;
  bool done = false;
  Received got;
  int64_t sent_bytes = 0;  // > capacity: the message did not fit
};

struct Message {
  int source = 0;
  int tag = 0;
  std::vector<char> bytes;
};

bool matches(const Receive& r, int source, int tag) {
  return r.tag == tag && (r.source == kAnySource || r.source == source);
}

// Fills receive `r` with a message of `bytes` bytes from `source`.
void fill(Receive& r, int source, const void* data, int64_t bytes) {
  std::memcpy(r.buffer, data, static_cast<size_t>(std::min(bytes, r.capacity)));
  r.done = true;
  r.got = Received{.source = source, .bytes = std::min(bytes, r.capacity)};
  r.sent_bytes = bytes;
}

// One endpoint's incoming side.
struct Box {
  std::mutex mutex;
  std::condition_variable arrived;
  bool woken = false;              // a message arrived since the last idle()
  std::deque<Message> unexpected;  // in arrival order
  std::list<Receive*> posted;      // not yet matched, in post order
};

}  // namespace

struct InProcessHub::State {
  std::string name;
  std::vector<Box> boxes;
  std::unique_ptr<std::atomic<bool>[]> dead;
  std::unique_ptr<std::atomic<bool>[]> lost;
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  State(int n, std::string label)
      : name(std::move(label)),
        boxes(static_cast<size_t>(n)),
        dead(new std::atomic<bool>[n]),
        lost(new std::atomic<bool>[n]) {
    for (int r = 0; r < n; ++r) dead[r] = lost[r] = false;
  }
};

class InProcessHub::Endpoint : public Transport {
 public:
  Endpoint(State& state, int rank) : state_(state), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(state_.boxes.size()); }
  const char* name() const override { return state_.name.c_str(); }

  void isend(const void* data, int64_t bytes, int peer, int tag, Request& request) override {
    check_alive("a send", peer, tag);
    PACER_CHECK(!request.pending() && peer >= 0 && peer < size() && bytes >= 0);
    request.handle = 0;  // complete at once: the bytes are copied below
    Box& box = state_.boxes[peer];
    {
      std::lock_guard lock(box.mutex);
      // Under the lock: kill() takes it too, so nothing is written to a dead endpoint's receives.
      if (state_.dead[peer]) return;
      auto it = std::find_if(box.posted.begin(), box.posted.end(),
                             [&](const Receive* r) { return matches(*r, rank_, tag); });
      if (it != box.posted.end()) {
        fill(**it, rank_, data, bytes);
        box.posted.erase(it);
      } else {
        const char* begin = static_cast<const char*>(data);
        box.unexpected.push_back(
            Message{.source = rank_, .tag = tag, .bytes = std::vector<char>(begin, begin + bytes)});
      }
      box.woken = true;
    }
    box.arrived.notify_all();
  }

  void irecv(void* data, int64_t capacity, int peer, int tag, Request& request) override {
    check_alive("a receive", peer, tag);
    PACER_CHECK(!request.pending() && capacity >= 0);
    auto* r = new Receive;
    *r = Receive{.buffer = data,
                 .capacity = capacity,
                 .source = peer,
                 .tag = tag,
                 .done = false,
                 .got = {},
                 .sent_bytes = 0};
    request.handle = reinterpret_cast<std::uintptr_t>(r);
    Box& box = own_box();
    std::lock_guard lock(box.mutex);
    auto it = std::find_if(box.unexpected.begin(), box.unexpected.end(),
                           [&](const Message& m) { return matches(*r, m.source, m.tag); });
    if (it == box.unexpected.end()) {
      box.posted.push_back(r);
      return;
    }
    fill(*r, it->source, it->bytes.data(), static_cast<int64_t>(it->bytes.size()));
    box.unexpected.erase(it);
  }

  bool test(Request& request, const char* what, Received* received) override {
    if (!request.pending()) return true;
    check_alive(what, -1, -1);
    std::lock_guard lock(own_box().mutex);
    return complete(request, what, received);
  }

  int test_some(std::span<Request> requests, std::vector<int>& completed,
                std::vector<Received>& received) override {
    check_alive("a poll", -1, -1);
    completed.clear();
    received.clear();
    std::lock_guard lock(own_box().mutex);
    for (size_t i = 0; i < requests.size(); ++i) {
      Received got;
      if (!requests[i].pending() || !complete(requests[i], "a receive", &got)) continue;
      completed.push_back(static_cast<int>(i));
      received.push_back(got);
    }
    return static_cast<int>(completed.size());
  }

  void cancel(Request& request) override {
    if (!request.pending()) return;
    auto* r = reinterpret_cast<Receive*>(request.handle);
    {
      Box& box = own_box();
      std::lock_guard lock(box.mutex);
      box.posted.remove(r);
    }
    delete r;
    request.handle = 0;
  }

  void idle(int microseconds) override {
    Box& box = own_box();
    std::unique_lock lock(box.mutex);
    box.arrived.wait_for(lock, std::chrono::microseconds(microseconds),
                         [&] { return box.woken || state_.dead[rank_]; });
    box.woken = false;
  }

  bool peer_known_dead(int peer) const override {
    return peer >= 0 && peer < size() && state_.dead[peer];
  }
  void set_peer_lost(int peer, bool lost) override {
    PACER_CHECK(rank_ == 0 && peer > 0 && peer < size());
    state_.lost[peer] = lost;
  }
  bool survives_dead_worker() const override { return true; }
  bool sends_complete_at_once() const override { return true; }
  [[noreturn]] void abort_job(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }

 private:
  Box& own_box() { return state_.boxes[rank_]; }

  void check_alive(const char* what, int peer, int tag) const {
    if (!state_.dead[rank_]) return;
    fail("{}: rank {}: {} (peer rank {}, {} message, tag {}): this endpoint was killed",
         state_.name, rank_, what, peer, tag_name(tag), tag);
  }

  // With the box's mutex held: whether the receive of `request` has completed; if so, frees it.
  bool complete(Request& request, const char* what, Received* received) {
    auto* r = reinterpret_cast<Receive*>(request.handle);
    if (!r->done) return false;
    const Receive done = *r;
    delete r;
    request.handle = 0;
    if (done.sent_bytes > done.capacity) {
      fail("{}: rank {}: {} from rank {} (tag {}): a message of {} bytes for a receive of {}",
           state_.name, rank_, what, done.got.source, done.tag, done.sent_bytes, done.capacity);
    }
    if (received) *received = done.got;
    return true;
  }

  State& state_;
  const int rank_;
};

InProcessHub::InProcessHub(int endpoints, std::string name)
    : state_(std::make_unique<State>(endpoints, std::move(name))) {
  PACER_CHECK(endpoints >= 1);
  for (int r = 0; r < endpoints; ++r) {
    state_->endpoints.push_back(std::make_unique<Endpoint>(*state_, r));
  }
}

InProcessHub::~InProcessHub() {
  // Receives still posted (a killed endpoint's, or a lost worker's) are freed with the hub.
  for (Box& box : state_->boxes) {
    for (Receive* r : box.posted) delete r;
  }
}

int InProcessHub::size() const { return static_cast<int>(state_->boxes.size()); }

Transport& InProcessHub::endpoint(int r) {
  PACER_CHECK(r >= 0 && r < size());
  return *state_->endpoints[static_cast<size_t>(r)];
}

void InProcessHub::kill(int r) {
  PACER_CHECK(r >= 0 && r < size());
  {
    std::lock_guard lock(state_->boxes[r].mutex);
    state_->dead[r] = true;
  }
  for (Box& box : state_->boxes) {
    {
      std::lock_guard lock(box.mutex);
      box.woken = true;
    }
    box.arrived.notify_all();
  }
}

bool InProcessHub::lost(int r) const {
  PACER_CHECK(r >= 0 && r < size());
  return state_->lost[r];
}

}  // namespace pacer::cluster
