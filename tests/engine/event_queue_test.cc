#include "pacer/engine/sim/event_queue.h"

#include <gtest/gtest.h>

namespace pacer {
namespace {

TEST(EventQueue, PopsInTimeOrder) {
  EventQueue q;
  for (double t : {3.0, 1.0, 2.0, 0.5, 2.5}) q.push(Event{.time = t});
  std::vector<double> times;
  while (!q.empty()) times.push_back(q.pop().time);
  EXPECT_EQ(times, (std::vector<double>{0.5, 1.0, 2.0, 2.5, 3.0}));
}

TEST(EventQueue, BreaksTiesByInsertionOrder) {
  EventQueue q;
  for (int w = 0; w < 100; ++w) q.push(Event{.time = 1.0, .worker = (w * 37) % 100});
  q.push(Event{.time = 0.5, .worker = -1});
  EXPECT_EQ(q.pop().worker, -1);
  for (int w = 0; w < 100; ++w) {
    Event e = q.pop();
    EXPECT_EQ(e.worker, (w * 37) % 100) << "tie " << w;
    EXPECT_EQ(e.sequence, static_cast<uint64_t>(w));
  }
}

}  // namespace
}  // namespace pacer
