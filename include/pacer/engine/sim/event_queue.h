// The simulator's event queue: events ordered by time, ties broken by insertion order.
//
// Two events at the same virtual time come out in the order they were pushed (a strictly
// increasing sequence number breaks the tie), so a simulation is deterministic even when many
// workers finish at exactly the same instant, as they do under fixed timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace pacer {

struct Event {
  double time = 0;
  uint64_t sequence = 0;  // assigned by push
  int worker = 0;
  int kind = 0;      // engine-defined
  uint64_t job = 0;  // engine-defined (the job id it belongs to)
};

class EventQueue {
 public:
  // Adds an event; its sequence number is assigned here.
  void push(Event event) {
    event.sequence = next_sequence_++;
    heap_.push(event);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  // Removes and returns the earliest event (smallest time, then smallest sequence).
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace pacer
