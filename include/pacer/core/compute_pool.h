// A thread pool for computations whose results are used in a fixed order (engine.threads): the
// simulator's jobs computed ahead of virtual time (engine/sim/simulator.h), and the partitions of
// an evaluation (model/objective.h).
//
// The pool only runs tasks; the order in which their results are used is the caller's, who waits
// for each task when it needs its result. So a caller that uses results in an order of its own
// (event order, partition order) gets the same result, bit for bit, for any number of threads.
//
// Tasks are run in order of their `due` key (for the simulator, the virtual time at which the
// result is needed; then submission order), so the threads work on what the caller will ask for
// first. wait() on a task that no thread has started runs it on the calling thread: the thread
// that waits is one of the pool's `threads`, and a pool of one thread starts none of its own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "pacer/core/config.h"

namespace pacer {

// engine.threads: how many threads compute (>= 1; at most 1024): the simulator's worker jobs, and
// the evaluations of every engine. Results do not depend on it. When the key is absent, the default
// is the environment variable PACER_ENGINE_THREADS if it is set, else the processors this process
// may run on (core/process.h); the default is not written into the run's resolved configuration,
// so a run's files are the same on every machine. Errors name the key (or the variable) and the
// valid range.
int read_engine_threads(const Config& config);

class ComputePool {
 public:
  class Task;
  using Ticket = std::shared_ptr<Task>;

  // `threads` (>= 1) computing threads in all, the caller of wait() included: threads − 1
  // background threads are started here.
  explicit ComputePool(int threads);
  // Waits for the tasks already started; tasks not started are dropped. Tickets stay valid.
  ~ComputePool();
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  int threads() const { return static_cast<int>(background_.size()) + 1; }

  // Queues `work`, to be run once by some thread. `work` must not throw (a task that may fail
  // catches its own exception and keeps it for the waiter). Tasks with a smaller `due` start
  // first; equal keys start in submission order.
  Ticket submit(double due, std::function<void()> work);
  // Returns once the ticket's task has run: at once if it has, after running it here if no thread
  // has started it, and otherwise after it, running queued tasks meanwhile (so the caller may
  // return a task's length after its own task ended).
  void wait(const Ticket& ticket);
  // For a result no longer wanted: drops the task if no thread has started it (it will never run)
  // and returns true; otherwise waits for it as wait() does and returns false.
  bool drop(const Ticket& ticket);

 private:
  struct Later {
    bool operator()(const Ticket& a, const Ticket& b) const;
  };
  void serve();
  // Under the lock: the next queued task, removed from the queue (null: none); whether one is
  // queued. Both discard the entries of tasks a waiter ran or dropped.
  Ticket pop_queued();
  bool has_queued();
  // Runs the task (whose state the caller set to running, under the lock) and marks it done.
  void run(const Ticket& task);

  std::mutex mutex_;
  std::condition_variable queued_;  // a task was queued, or the pool is stopping
  std::condition_variable done_;    // a task finished, or one was queued
  std::priority_queue<Ticket, std::vector<Ticket>, Later> queue_;
  uint64_t submitted_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> background_;
};

class ComputePool::Task {
 private:
  friend class ComputePool;
  enum State { kQueued, kRunning, kDone };
  double due = 0;
  uint64_t order = 0;
  State state = kQueued;
  std::function<void()> work;
};

}  // namespace pacer
