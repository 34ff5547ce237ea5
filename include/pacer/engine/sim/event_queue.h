// The simulator's event queue: events ordered by time, ties broken by insertion order.
//
// Two events at the same virtual time come out in the order they were pushed (a strictly
// increasing sequence number breaks the tie), so a simulation is deterministic even when many
// workers finish at exactly the same instant, as they do under fixed timing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pacer/core/state.h"

namespace pacer {

struct Event {
  double time = 0;
  uint64_t sequence = 0;  // assigned by push
  int worker = 0;
  int kind = 0;      // engine-defined
  uint64_t job = 0;  // engine-defined (the job id it belongs to)

  void checkpoint(StateArchive& a) {
    a.io(time);
    a.io(sequence);
    a.io(worker);
    a.io(kind);
    a.io(job);
  }
};

class EventQueue {
 public:
  // Adds an event; its sequence number is assigned here.
  void push(Event event) {
    event.sequence = next_sequence_++;
    heap_.push_back(event);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  // Removes and returns the earliest event (smallest time, then smallest sequence).
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  // The pending events and the next sequence number, for checkpoints. The heap's layout is saved
  // as it is, so a restored queue pops in exactly the order the saved one would have.
  void checkpoint(StateArchive& a) {
    a.io(heap_);
    a.io(next_sequence_);
    if (a.loading() && !std::is_heap(heap_.begin(), heap_.end(), Later{})) {
      a.mismatch("the event queue is not a heap");
    }
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.sequence > b.sequence;
    }
  };
  std::vector<Event> heap_;  // a binary heap under Later (std::push_heap / pop_heap)
  uint64_t next_sequence_ = 0;
};

}  // namespace pacer
