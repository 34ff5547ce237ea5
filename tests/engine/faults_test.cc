// Failures in the simulator (FaultPlan, the [faults] table) and the masters' timer: a killed
// worker's job is dropped and never computed, the master is told once, a worker comes back idle,
// random failures repeat exactly for a seed, a timer fires at its time, and engine_stats counts
// every worker's jobs, losses and rejoins under the keys every engine writes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/state.h"
#include "pacer/engine/sim/simulator.h"
#include "pacer/engine/worker_statistics.h"

namespace pacer {
namespace {

// Every worker's job takes `units` seconds (one unit per second on every worker).
class UnitTiming : public TimingModel {
 public:
  explicit UnitTiming(int n) : n_(n) {}
  std::string name() const override { return "unit"; }
  int num_workers() const override { return n_; }
  Duration compute_time(int, double units, int64_t, Rng&) const override {
    return Duration{units, 0};
  }
  std::optional<double> mean_unit_time(int) const override { return 1.0; }

 private:
  int n_;
};

// A worker whose jobs cost `units` work units; records the tags it computed.
class CountingWorker : public Worker {
 public:
  CountingWorker(double units, std::vector<int64_t>* computed)
      : units_(units), computed_(computed) {}
  double units(const Job&) const override { return units_; }
  void compute(const Job& job, const Vec& x, WorkerOutput& out) override {
    computed_->push_back(job.tag);
    out.payload = x;
    out.versions.assign(1, job.tag);
  }

 private:
  double units_;
  std::vector<int64_t>* computed_;
};

struct Happening {
  std::string what;  // "reply", "lost", "rejoined", "timer"
  int worker;
  double time;
};

// Keeps every live worker busy (a new job after each reply and on return) until `end`.
class KeepBusyMaster : public Master {
 public:
  explicit KeepBusyMaster(double end) : end_(end) {}
  void start(Cluster& c) override {
    for (int i = 0; i < c.num_workers(); ++i) c.assign(i, Job{next_tag_++}, Vec::Zero(1));
  }
  void on_reply(const Reply& r, Cluster& c) override {
    log.push_back({"reply", r.worker, c.now()});
    if (c.now() >= end_) done_ = true;
    if (!done_) c.assign(r.worker, Job{next_tag_++}, Vec::Zero(1));
  }
  void on_lost(int w, Cluster& c) override {
    EXPECT_FALSE(c.alive(w));
    EXPECT_FALSE(c.busy(w));
    log.push_back({"lost", w, c.now()});
  }
  void on_rejoined(int w, Cluster& c) override {
    EXPECT_TRUE(c.alive(w));
    EXPECT_FALSE(c.busy(w));
    log.push_back({"rejoined", w, c.now()});
    c.assign(w, Job{next_tag_++}, Vec::Zero(1));
  }
  void on_timer(Cluster& c) override { log.push_back({"timer", -1, c.now()}); }
  bool finished() const override { return done_; }

  std::vector<Happening> log;

 private:
  double end_;
  bool done_ = false;
  int64_t next_tag_ = 0;
};

struct Fixture {
  explicit Fixture(int n, double units = 1.0) : Fixture(std::vector<double>(n, units)) {}
  // Worker i's jobs take units[i] seconds.
  explicit Fixture(const std::vector<double>& units)
      : timing(static_cast<int>(units.size())), computed(units.size()) {
    for (size_t i = 0; i < units.size(); ++i) {
      workers.push_back(std::make_unique<CountingWorker>(units[i], &computed[i]));
    }
  }
  UnitTiming timing;
  std::vector<std::vector<int64_t>> computed;
  std::vector<std::unique_ptr<Worker>> workers;
};

std::vector<Happening> of_worker(const std::vector<Happening>& log, int w) {
  std::vector<Happening> out;
  for (const Happening& h : log) {
    if (h.worker == w) out.push_back(h);
  }
  return out;
}

TEST(SimulatorFaults, AKilledWorkersJobIsDroppedAndNeverComputed) {
  Fixture f(3, 2.0);  // every job takes 2 s
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 1, .time = 3.0}};  // in the middle of its second job
  sim.set_faults(plan);
  KeepBusyMaster master(10.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w1 = of_worker(master.log, 1);
  ASSERT_EQ(w1.size(), 2u);
  EXPECT_EQ(w1[0].what, "reply");
  EXPECT_DOUBLE_EQ(w1[0].time, 2.0);
  EXPECT_EQ(w1[1].what, "lost");
  EXPECT_DOUBLE_EQ(w1[1].time, 3.0);
  EXPECT_EQ(f.computed[1].size(), 1u);  // the second job was dropped before it was computed
  EXPECT_FALSE(sim.alive(1));
  // The others went on to the end.
  EXPECT_EQ(of_worker(master.log, 0).size(), 5u);
  EXPECT_EQ(sim.stats().workers.total_losses(), 1);
  EXPECT_EQ(sim.stats().workers.workers[1].jobs_cancelled, 1);
  EXPECT_DOUBLE_EQ(sim.stats().workers.workers[1].busy_time,
                   3.0);  // 2 s, then 1 s of the dropped job
}

TEST(SimulatorFaults, ALostWorkerComesBackIdleAfterRejoinAfter) {
  Fixture f(2);
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 0, .time = 1.5}};
  plan.rejoin_after = 2.0;
  sim.set_faults(plan);
  KeepBusyMaster master(6.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w0 = of_worker(master.log, 0);
  // Replies at 1, lost at 1.5 (its job dropped), back at 3.5, replies at 4.5 and 5.5 (the run
  // ends at worker 1's reply at 6).
  ASSERT_GE(w0.size(), 4u);
  EXPECT_EQ(w0[1].what, "lost");
  EXPECT_EQ(w0[2].what, "rejoined");
  EXPECT_DOUBLE_EQ(w0[2].time, 3.5);
  EXPECT_EQ(w0[3].what, "reply");
  EXPECT_DOUBLE_EQ(w0[3].time, 4.5);
  EXPECT_TRUE(sim.alive(0));
  EXPECT_EQ(sim.stats().workers.total_rejoins(), 1);
}

TEST(SimulatorFaults, RandomFailuresRepeatForASeedAndDifferAcrossSeeds) {
  auto losses = [](uint64_t seed) {
    Fixture f(4);
    Simulator sim(f.timing, CommModel{}, seed);
    FaultPlan plan;
    plan.rate = 0.05;  // one failure per worker per 20 s on average
    plan.rejoin_after = 5.0;
    sim.set_faults(plan);
    KeepBusyMaster master(200.0);
    sim.run(master, f.workers);
    std::vector<std::pair<int, double>> out;
    for (const Happening& h : master.log) {
      if (h.what == "lost") out.emplace_back(h.worker, h.time);
    }
    return out;
  };
  const auto a = losses(7);
  EXPECT_GE(a.size(), 10u);  // 4 workers × ~160 live seconds × 0.05: about 30 expected
  EXPECT_EQ(a, losses(7));
  EXPECT_NE(a, losses(8));
}

TEST(SimulatorFaults, ARunWithoutFaultsHasOnlyItsJobEvents) {
  Fixture f(3);
  Simulator sim(f.timing, CommModel{}, 1);
  KeepBusyMaster master(20.0);
  sim.run(master, f.workers);
  // 1 s jobs on 3 workers: replies at t = 1, ..., 19 from each, and at t = 20 worker 0's ends
  // the run. Any fault or timer event would add to the count.
  EXPECT_EQ(sim.stats().events, 19u * 3u + 1u);
  EXPECT_EQ(sim.stats().workers.total_losses(), 0);
}

// Never assigns anything after the first replies: the run can only stall.
class GiveUpMaster : public KeepBusyMaster {
 public:
  GiveUpMaster() : KeepBusyMaster(1e9) {}
  void on_reply(const Reply&, Cluster&) override {}
  void on_rejoined(int, Cluster&) override {}
};

TEST(SimulatorFaults, AStalledMethodIsAnErrorEvenWhileRandomFailuresArePending) {
  Fixture f(2);
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.rate = 0.5;
  plan.rejoin_after = 1.0;  // fault events alone never run out
  sim.set_faults(plan);
  GiveUpMaster master;
  EXPECT_THROW(sim.run(master, f.workers), Error);
}

// Sets a timer at 2.5 s and, when it fires, one at 4.2 s that replaces one at 9 s.
class TimerMaster : public KeepBusyMaster {
 public:
  TimerMaster() : KeepBusyMaster(6.0) {}
  void start(Cluster& c) override {
    KeepBusyMaster::start(c);
    c.set_timer(2.5);
  }
  void on_timer(Cluster& c) override {
    KeepBusyMaster::on_timer(c);
    if (++fired_ == 1) {
      c.set_timer(9.0);
      c.set_timer(4.2);  // replaces the 9 s timer
    }
  }

 private:
  int fired_ = 0;
};

TEST(SimulatorTimer, FiresAtItsTimeAndALaterSetReplacesIt) {
  Fixture f(1);
  Simulator sim(f.timing, CommModel{}, 1);
  TimerMaster master;
  sim.run(master, f.workers);
  std::vector<double> fired;
  for (const Happening& h : master.log) {
    if (h.what == "timer") fired.push_back(h.time);
  }
  EXPECT_EQ(fired, (std::vector<double>{2.5, 4.2}));
  // The timer at 2.5 came between the replies at 2 and 3.
  for (size_t k = 0; k + 1 < master.log.size(); ++k) {
    if (master.log[k].what == "timer" && master.log[k].time == 2.5) {
      EXPECT_DOUBLE_EQ(master.log[k - 1].time, 2.0);
      EXPECT_DOUBLE_EQ(master.log[k + 1].time, 3.0);
    }
  }
}

// engine_stats of a run with a worker lost and back (engine/worker_statistics.h). Jobs take 2 s.
// Workers 0 and 2 reply at 2, 4, 6, 8 and are busy with their fifth job when the run ends; worker
// 1 replies at 2, is killed at 3 one second into its second job (dropped: cancelled), returns at
// 5 and replies at 7 and 9, which ends the run (KeepBusyMaster(9)). All values are small integers
// or their ratios, so they are compared exactly.
TEST(SimulatorFaults, EngineStatsCountEachWorkersJobsLossesAndRejoins) {
  Fixture f(3, 2.0);
  Simulator sim(f.timing, CommModel{}, 1);
  sim.set_faults(read_fault_plan(
      Config::parse("[faults]\nkill_workers = [1]\nkill_at = [3.0]\nrejoin_after = 2.0\n",
                    "faults.toml"),
      3));
  KeepBusyMaster master(9.0);
  sim.run(master, f.workers);
  nlohmann::json stats;
  sim.stats().to_json(stats);
  EXPECT_EQ(missing_worker_statistics(stats, 3), "");
  EXPECT_EQ(stats["end_time"], 9.0);
  EXPECT_EQ(stats["jobs_completed_per_worker"], nlohmann::json({4, 3, 4}));
  EXPECT_EQ(stats["jobs_cancelled_per_worker"], nlohmann::json({0, 1, 0}));
  EXPECT_EQ(stats["late_replies_drained_per_worker"], nlohmann::json({0, 0, 0}));
  // Worker 1: 2 s, 1 s of the dropped job, 2 s, 2 s. The jobs still running at 9 are not counted.
  EXPECT_EQ(stats["busy_time_per_worker"], nlohmann::json({8.0, 7.0, 8.0}));
  EXPECT_EQ(stats["compute_time_per_worker"], stats["busy_time_per_worker"]);
  EXPECT_EQ(stats["injected_time_per_worker"], nlohmann::json({0.0, 0.0, 0.0}));
  EXPECT_EQ(stats["idle_time_per_worker"], nlohmann::json({1.0, 2.0, 1.0}));
  EXPECT_EQ(stats["utilisation_per_worker"], nlohmann::json({8.0 / 9, 7.0 / 9, 8.0 / 9}));
  EXPECT_EQ(stats["losses_per_worker"], nlohmann::json({0, 1, 0}));
  EXPECT_EQ(stats["rejoins_per_worker"], nlohmann::json({0, 1, 0}));
  EXPECT_EQ(stats["lost_per_worker"], nlohmann::json({false, false, false}));
  EXPECT_EQ(stats["lost_time_per_worker"], nlohmann::json({nullptr, 3.0, nullptr}));
  EXPECT_EQ(stats["workers_lost"], 1);
  EXPECT_EQ(stats["workers_rejoined"], 1);
}

// A worker that never returns is lost at the end, and its statistics survive a checkpoint.
TEST(SimulatorFaults, EngineStatsSayWhoIsLostAtTheEndAndSurviveACheckpoint) {
  Fixture f(2, 2.0);
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 0, .time = 5.0}};
  sim.set_faults(plan);
  KeepBusyMaster master(8.0);
  sim.run(master, f.workers);
  nlohmann::json stats;
  sim.stats().to_json(stats);
  EXPECT_EQ(missing_worker_statistics(stats, 2), "");
  EXPECT_EQ(stats["lost_per_worker"], nlohmann::json({true, false}));
  EXPECT_EQ(stats["lost_time_per_worker"], nlohmann::json({5.0, nullptr}));
  EXPECT_EQ(stats["rejoins_per_worker"], nlohmann::json({0, 0}));

  StateArchive saved = StateArchive::for_saving();
  SimulatorStats copy = sim.stats();
  copy.checkpoint(saved);
  SimulatorStats loaded;
  loaded.workers.workers.resize(2);                 // as the simulator sizes it before loading
  loaded.workers.end_time = copy.workers.end_time;  // the clock's, saved by the simulator
  StateArchive reading = StateArchive::for_loading(saved.bytes(), "stats");
  loaded.checkpoint(reading);
  reading.expect_end();
  nlohmann::json reloaded;
  loaded.to_json(reloaded);
  EXPECT_EQ(reloaded, stats);
}

// With a deadline (engine.worker_timeout_s) the master learns of a death as a cluster engine's
// does: when the job the dead worker was sent has gone unanswered for the deadline.
TEST(SimulatorDeadline, ADeadWorkerIsDeclaredLostAtItsJobsDeadlineNotAtItsDeath) {
  Fixture f(3, 2.0);  // every job takes 2 s
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 1, .time = 3.0}};  // in its second job, assigned at 2 s
  plan.deadline = 5.0;
  sim.set_faults(plan);
  KeepBusyMaster master(12.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w1 = of_worker(master.log, 1);
  ASSERT_EQ(w1.size(), 2u);
  EXPECT_EQ(w1[0].what, "reply");
  EXPECT_EQ(w1[1].what, "lost");
  EXPECT_DOUBLE_EQ(w1[1].time, 7.0);    // 2 s + the 5 s deadline
  EXPECT_EQ(f.computed[1].size(), 1u);  // the job it died in was never computed
  EXPECT_FALSE(sim.alive(1));
  EXPECT_EQ(sim.stats().workers.total_losses(), 1);
  EXPECT_EQ(sim.stats().workers.workers[1].last_loss_time, 7.0);
  EXPECT_DOUBLE_EQ(sim.stats().workers.workers[1].busy_time, 3.0);  // 2 s, then 1 s until death
  EXPECT_EQ(of_worker(master.log, 0).size(), 6u);                   // replies at 2, 4, ..., 12
}

TEST(SimulatorDeadline, ASlowWorkerIsLostAtTheDeadlineAndBackWithItsLateReply) {
  Fixture f(std::vector<double>{10.0, 1.0});  // worker 0 takes 10 s per job, worker 1 1 s
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.deadline = 4.0;
  sim.set_faults(plan);
  KeepBusyMaster master(16.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w0 = of_worker(master.log, 0);
  // Lost at 4 (assigned at 0), back at 10 with its late reply (dropped: no "reply"), sent a new
  // job at once, lost again at 14.
  ASSERT_EQ(w0.size(), 3u);
  EXPECT_EQ(w0[0].what, "lost");
  EXPECT_DOUBLE_EQ(w0[0].time, 4.0);
  EXPECT_EQ(w0[1].what, "rejoined");
  EXPECT_DOUBLE_EQ(w0[1].time, 10.0);
  EXPECT_EQ(w0[2].what, "lost");
  EXPECT_DOUBLE_EQ(w0[2].time, 14.0);
  EXPECT_EQ(sim.stats().workers.total_rejoins(), 1);
  EXPECT_EQ(sim.stats().workers.total_losses(), 2);
  // A reply on the deadline itself is in time: with a 10 s deadline worker 0 is never lost.
  Fixture g(std::vector<double>{10.0, 1.0});
  Simulator on_time(g.timing, CommModel{}, 1);
  plan.deadline = 10.0;
  on_time.set_faults(plan);
  KeepBusyMaster other(16.0);
  on_time.run(other, g.workers);
  EXPECT_EQ(on_time.stats().workers.total_losses(), 0);
  EXPECT_EQ(of_worker(other.log, 0).size(), 1u);  // its reply at 10
}

TEST(SimulatorDeadline, AWorkerDeadWhileIdleIsLostAtTheDeadlineOfItsNextJob) {
  Fixture f(2, 2.0);
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 0, .time = 2.0}};  // the instant its first reply is delivered
  plan.deadline = 3.0;
  sim.set_faults(plan);
  KeepBusyMaster master(9.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w0 = of_worker(master.log, 0);
  ASSERT_EQ(w0.size(), 2u);
  EXPECT_EQ(w0[0].what, "reply");
  EXPECT_EQ(w0[1].what, "lost");
  // The kill at 2 s follows the reply at 2 s (pushed first): the job sent then never answers.
  EXPECT_DOUBLE_EQ(w0[1].time, 5.0);
}

// Closes a step at the first `k` replies and cancels the jobs still out (straggler_policy =
// "cancel"), then sends every live worker the next step.
class CancellingMaster : public Master {
 public:
  CancellingMaster(int k, double end) : k_(k), end_(end) {}
  void start(Cluster& c) override { send_step(c); }
  void on_reply(const Reply& r, Cluster& c) override {
    log.push_back({"reply", r.worker, c.now()});
    if (++replies_ < k_) return;
    if (c.now() >= end_) {
      done_ = true;
      return;
    }
    for (int w = 0; w < c.num_workers(); ++w) {
      if (c.alive(w) && c.busy(w)) c.cancel(w);
    }
    send_step(c);
  }
  void on_lost(int w, Cluster& c) override { log.push_back({"lost", w, c.now()}); }
  void on_rejoined(int, Cluster&) override {}
  bool finished() const override { return done_; }
  std::vector<Happening> log;

 private:
  void send_step(Cluster& c) {
    replies_ = 0;
    for (int w = 0; w < c.num_workers(); ++w) {
      if (c.alive(w)) c.assign(w, Job{tag_}, Vec::Zero(1));
    }
    ++tag_;
  }
  int k_;
  double end_;
  int replies_ = 0;
  int64_t tag_ = 0;
  bool done_ = false;
};

// A dead worker's job cancelled at every step close is sent again at once; its deadline still
// runs from the first job it never answered, so cancelling cannot hide the death.
TEST(SimulatorDeadline, CancellingADeadWorkersJobsDoesNotPostponeItsDeadline) {
  Fixture f(3);  // 1 s jobs
  Simulator sim(f.timing, CommModel{}, 1);
  FaultPlan plan;
  plan.kills = {{.worker = 2, .time = 0.5}};
  plan.deadline = 2.5;
  sim.set_faults(plan);
  CancellingMaster master(2, 6.0);
  sim.run(master, f.workers);
  const std::vector<Happening> w2 = of_worker(master.log, 2);
  ASSERT_EQ(w2.size(), 1u);
  EXPECT_EQ(w2[0].what, "lost");
  EXPECT_DOUBLE_EQ(w2[0].time, 2.5);  // sent at 0, cancelled at 1 and 2: lost at 0 + 2.5
  // Jobs cancelled at 1 and 2 and the one declared lost at 2.5.
  EXPECT_EQ(sim.stats().workers.workers[2].jobs_cancelled, 3);
  EXPECT_EQ(f.computed[2].size(), 0u);
}

TEST(SimulatorDeadline, TheSameRunTwiceIsTheSameAndSurvivesACheckpoint) {
  auto run = [](bool checkpointed) {
    Fixture f(std::vector<double>{3.0, 1.0, 1.5});
    Simulator sim(f.timing, CommModel{}, 7);
    FaultPlan plan;
    plan.kills = {{.worker = 2, .time = 4.0}};
    plan.deadline = 2.5;
    sim.set_faults(plan);
    KeepBusyMaster master(20.0);
    if (checkpointed) {
      // Save and load the simulator at a quiet point in the middle of the run.
      bool done = false;
      sim.set_quiet_point([&] {
        if (done || sim.now() < 6.0) return;
        done = true;
        StateArchive saved = StateArchive::for_saving();
        sim.checkpoint(saved);
        StateArchive loading = StateArchive::for_loading(saved.bytes(), "simulator");
        sim.checkpoint(loading);
        loading.expect_end();
      });
    }
    sim.run(master, f.workers);
    std::vector<std::string> out;
    for (const Happening& h : master.log) {
      out.push_back(fmt::format("{} {} {}", h.what, h.worker, h.time));
    }
    return out;
  };
  const std::vector<std::string> plain = run(false);
  EXPECT_EQ(run(false), plain);
  EXPECT_EQ(run(true), plain);
  // Worker 2 died at 4 s in its job sent at 3 s; worker 0 (3 s jobs) is lost at every deadline
  // and back with every late reply.
  EXPECT_NE(std::find(plain.begin(), plain.end(), "lost 2 5.5"), plain.end());
  EXPECT_NE(std::find(plain.begin(), plain.end(), "lost 0 2.5"), plain.end());
  EXPECT_NE(std::find(plain.begin(), plain.end(), "rejoined 0 3"), plain.end());
}

TEST(WorkerStatistics, IdleTimeIsNeverNegativeAndAnEmptyRunHasNoUtilisation) {
  EngineWorkerStatistics stats;
  stats.workers.resize(1);
  stats.workers[0].busy_time = 3.0;
  stats.end_time = 2.0;  // on MPI a job may overlap time excluded from the clock
  EXPECT_EQ(stats.idle_time(0), 0.0);
  EXPECT_EQ(stats.utilisation(0), 1.5);
  stats.end_time = 0;
  EXPECT_EQ(stats.utilisation(0), 0.0);
}

TEST(WorkerStatistics, MissingKeysAreNamed) {
  EngineWorkerStatistics stats;
  stats.workers.resize(2);
  nlohmann::json out;
  stats.to_json(out);
  EXPECT_EQ(missing_worker_statistics(out, 2), "");
  // Every key of the list is written, and nothing else ends in _per_worker.
  size_t per_worker = 0;
  for (const auto& [key, value] : out.items()) {
    if (key.ends_with("_per_worker")) ++per_worker;
  }
  EXPECT_EQ(per_worker, kWorkerStatisticsKeys.size());
  EXPECT_NE(missing_worker_statistics(out, 3).find("one per worker"), std::string::npos);
  out.erase("lost_time_per_worker");
  EXPECT_EQ(missing_worker_statistics(out, 2), "no \"lost_time_per_worker\"");
  EXPECT_NE(missing_worker_statistics(nlohmann::json::array(), 2), "");
  EngineWorkerStatistics none;
  nlohmann::json empty;
  none.to_json(empty);
  EXPECT_EQ(missing_worker_statistics(empty, 0), "");
}

std::string fault_error(const std::string& toml) {
  try {
    read_fault_plan(Config::parse(toml, "faults.toml"), 4);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FaultPlan, ReadsTheFaultsTableAndNamesBadKeys) {
  const FaultPlan plan = read_fault_plan(
      Config::parse("[faults]\nkill_workers = [3, 1]\nkill_at = [50.0, 7]\nrejoin_after = 4\n",
                    "faults.toml"),
      4);
  ASSERT_EQ(plan.kills.size(), 2u);
  EXPECT_EQ(plan.kills[0].worker, 3);
  EXPECT_DOUBLE_EQ(plan.kills[0].time, 50.0);
  EXPECT_EQ(plan.kills[1].worker, 1);
  EXPECT_DOUBLE_EQ(plan.kills[1].time, 7.0);
  EXPECT_DOUBLE_EQ(plan.rejoin_after, 4.0);
  EXPECT_TRUE(read_fault_plan(Config::parse("", "none.toml"), 4).empty());

  EXPECT_NE(
      fault_error("[faults]\nkill_workers = [4]\nkill_at = [1.0]\n").find("faults.kill_workers"),
      std::string::npos);
  EXPECT_NE(
      fault_error("[faults]\nkill_workers = [1.5]\nkill_at = [1.0]\n").find("faults.kill_workers"),
      std::string::npos);
  EXPECT_NE(fault_error("[faults]\nkill_workers = [1, 2]\nkill_at = [1.0, 2.0, 3.0]\n")
                .find("faults.kill_at"),
            std::string::npos);
  EXPECT_NE(fault_error("[faults]\nkill_workers = [1]\nkill_at = [-1.0]\n").find("faults.kill_at"),
            std::string::npos);
  EXPECT_NE(fault_error("[faults]\nrejoin_after = 0\n").find("faults.rejoin_after"),
            std::string::npos);
  EXPECT_NE(fault_error("[faults]\nrate = -0.1\n").find("faults.rate"), std::string::npos);
  EXPECT_DOUBLE_EQ(
      read_fault_plan(Config::parse("[engine]\nworker_timeout_s = 2.5\n", "f.toml"), 4).deadline,
      2.5);
  EXPECT_NE(fault_error("[engine]\nworker_timeout_s = 0\n").find("engine.worker_timeout_s"),
            std::string::npos);
  EXPECT_NE(fault_error("[engine]\nworker_timeout_s = 3\n[faults]\nrejoin_after = 4\n")
                .find("'faults.rejoin_after': expected no key with engine.worker_timeout_s"),
            std::string::npos)
      << fault_error("[engine]\nworker_timeout_s = 3\n[faults]\nrejoin_after = 4\n");
}

}  // namespace
}  // namespace pacer
