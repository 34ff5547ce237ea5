#include "pacer/core/compute_pool.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "pacer/core/error.h"
#include "pacer/core/process.h"

namespace pacer {
namespace {

constexpr int kMaxThreads = 1024;

// PACER_ENGINE_THREADS when set, else the processors available.
int default_engine_threads() {
  const char* text = std::getenv("PACER_ENGINE_THREADS");
  if (text == nullptr || *text == '\0') return available_processors();
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, value);
  if (error != std::errc() || last != end || value < 1 || value > kMaxThreads) {
    fail(
        "environment variable PACER_ENGINE_THREADS = \"{}\": expected an integer in 1..{} (the "
        "default of engine.threads)",
        text, kMaxThreads);
  }
  return value;
}

}  // namespace

int read_engine_threads(const Config& config) {
  if (!config.has("engine.threads")) return default_engine_threads();
  const int64_t threads = config.get_int("engine.threads", 1);
  if (threads < 1 || threads > kMaxThreads) {
    config.fail_key("engine.threads",
                    fmt::format("an integer in 1..{} (threads computing the workers' jobs and the "
                                "evaluations; results do not depend on it)",
                                kMaxThreads));
  }
  return static_cast<int>(threads);
}

bool ComputePool::Later::operator()(const Ticket& a, const Ticket& b) const {
  if (a->due != b->due) return a->due > b->due;
  return a->order > b->order;
}

ComputePool::ComputePool(int threads) {
  PACER_CHECK(threads >= 1);
  for (int k = 1; k < threads; ++k) background_.emplace_back([this] { serve(); });
}

ComputePool::~ComputePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : background_) t.join();
}

ComputePool::Ticket ComputePool::submit(double due, std::function<void()> work) {
  auto task = std::make_shared<Task>();
  task->due = due;
  task->work = std::move(work);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task->order = submitted_++;
    // Without background threads the task waits for wait() to run it.
    if (!background_.empty()) queue_.push(task);
  }
  queued_.notify_one();
  done_.notify_all();  // a waiter helping with the queue has work
  return task;
}

void ComputePool::wait(const Ticket& ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (ticket->state == Task::kQueued) {
    // Not started: run it here. It stays in the queue, where serve() skips it.
    ticket->state = Task::kRunning;
    lock.unlock();
    run(ticket);
    return;
  }
  // Another thread runs it: help with the queue meanwhile rather than sit idle.
  while (ticket->state != Task::kDone) {
    Ticket next = pop_queued();
    if (!next) {
      done_.wait(lock, [&] { return ticket->state == Task::kDone || has_queued(); });
      continue;
    }
    next->state = Task::kRunning;
    lock.unlock();
    run(next);
    lock.lock();
  }
}

ComputePool::Ticket ComputePool::pop_queued() {
  while (!queue_.empty()) {
    Ticket task = queue_.top();
    queue_.pop();
    if (task->state == Task::kQueued) return task;  // others were run by a waiter, or dropped
  }
  return nullptr;
}

bool ComputePool::has_queued() {
  while (!queue_.empty() && queue_.top()->state != Task::kQueued) queue_.pop();
  return !queue_.empty();
}

bool ComputePool::drop(const Ticket& ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (ticket->state == Task::kQueued) {
    ticket->state = Task::kDone;  // serve() skips it
    ticket->work = nullptr;
    return true;
  }
  done_.wait(lock, [&] { return ticket->state == Task::kDone; });
  return false;
}

void ComputePool::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Ticket task = pop_queued();
    if (!task) continue;
    task->state = Task::kRunning;
    lock.unlock();
    run(task);
    lock.lock();
  }
}

void ComputePool::run(const Ticket& task) {
  task->work();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task->state = Task::kDone;
    task->work = nullptr;  // release what the task captured
  }
  done_.notify_all();
}

}  // namespace pacer
