// Minibatch sampling (training.sampling), the reported loss, PGC-FR's lockstep default and the
// queue straggler policy of the synchronous methods (DESIGN.md sections 2, 3.1 and 6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "pacer/coding/decoder.h"
#include "pacer/core/error.h"
#include "pacer/method/coded_worker.h"
#include "pacer/method/method.h"
#include "sync_test_harness.h"

namespace pacer {
namespace {

using testing::least_squares;
using testing::method_toml;
using testing::run_method;
using testing::RunResult;
using testing::timing;

std::string sampling(const std::string& mode) {
  return "[training]\nsampling = \"" + mode + "\"\n";
}

// The largest ‖a_t − b_t‖ / max(1, ‖b_t‖) over the steps of two trajectories of equal length.
double max_relative_gap(const std::vector<Vec>& a, const std::vector<Vec>& b) {
  EXPECT_EQ(a.size(), b.size());
  double gap = 0;
  for (size_t t = 0; t < std::min(a.size(), b.size()); ++t) {
    gap = std::max(gap, (a[t] - b[t]).norm() / std::max(1.0, b[t].norm()));
  }
  return gap;
}

// ---- which rows a worker draws ----

// Worker `w` of `method_toml` answering a job of step `tag` at x, after answering `before` (a list
// of earlier tags) at x.
Vec payload_of(const std::string& method_toml, std::shared_ptr<const Objective> objective, int n,
               int w, int64_t tag, const std::vector<int64_t>& before, const Vec& x) {
  std::unique_ptr<Method> method =
      make_method(Config::parse(method_toml, "m.toml"), MethodSetup{objective, nullptr, n, 7});
  std::unique_ptr<Worker> worker = method->make_worker(w);
  WorkerOutput out;
  for (int64_t t : before) worker->compute(Job{t}, x, out);
  worker->compute(Job{tag}, x, out);
  return out.payload;
}

// GC-FR, s = 1: workers 0 and 1 both hold partitions {0, 1}. With shared sampling their messages
// for a step are equal bit for bit, whatever each computed before; with independent sampling they
// are not (each draws from its own stream).
TEST(SharedSampling, WorkersHoldingAPartitionDrawTheSameRowsAtAStep) {
  const int n = 6;
  auto objective = least_squares(n, 120, 4, /*batch=*/3);
  const Vec x = Vec::Constant(4, 0.3);
  const std::string shared = method_toml("gc-fr", 1) + sampling("shared");
  const Vec a = payload_of(shared, objective, n, 0, 5, {}, x);
  EXPECT_EQ(a, payload_of(shared, objective, n, 1, 5, {}, x));
  EXPECT_EQ(a, payload_of(shared, objective, n, 1, 5, {0, 1, 2, 3}, x));
  EXPECT_NE(a, payload_of(shared, objective, n, 1, 6, {}, x));  // another step, other rows
  const std::string independent = method_toml("gc-fr", 1) + sampling("independent");
  EXPECT_NE(payload_of(independent, objective, n, 0, 5, {}, x),
            payload_of(independent, objective, n, 1, 5, {}, x));
}

// Shared sampling is the synchronous methods' default.
TEST(SharedSampling, IsTheDefault) {
  const int n = 6;
  auto objective = least_squares(n, 120, 4, 3);
  const Vec x = Vec::Constant(4, -0.2);
  for (const char* name : {"dgd", "gc-cr", "pgc-cr"}) {
    const std::string toml = method_toml(name, 1);  // (dgd reads no method.s)
    EXPECT_EQ(payload_of(toml, objective, n, 2, 4, {0, 1}, x),
              payload_of(toml + sampling("shared"), objective, n, 2, 4, {0, 1}, x))
        << name;
    EXPECT_NE(payload_of(toml, objective, n, 2, 4, {0, 1}, x),
              payload_of(toml + sampling("independent"), objective, n, 2, 4, {0, 1}, x))
        << name;
  }
}

// The acceptance test of issue #26. With shared sampling every copy of g_p(x_t) is the same
// minibatch gradient, so a decoder that is exact for the responder set reproduces DGD's step,
// minibatches and all. n = 12, s = 2 (c = 3), minibatches of 4 of each partition's 20 rows, 100
// steps: GC-FR, GC-CR and IS-GC-FR under random stragglers (exact for any n − s responders),
// IS-GC-CR with every worker equally fast (the fastest n − s are 0..9, whose disjoint windows
// {0, 3, 6, 9} cover every partition).
//
// Tolerance 1e-9, relative to max(1, ‖x‖). With every copy of g_p(x_t) equal, an exact decoder's
// ĝ differs from DGD's mean only by rounding: (i) the residual r of a_Fᵀ B_F = 1ᵀ perturbs each
// partition's coefficient by at most r (checked below: r <= 1e-12), and (ii) GC-CR's sum of
// (n − s)·c = 30 terms with weights |a_i B_ip| <= max|a|·max|B| (max|a| is about 20 for this code,
// checked <= 100) rounds by at most 30·100·max|B|·u ≈ 3e-13·max|B| of max‖g_p‖ (u = 2^-53).
// Gradient steps with η < 2/L do not amplify an earlier error (‖I − ηH‖ <= 1), so 100 steps add
// at most 100·η·(r + 3e-13·max|B|)·max‖g_p‖: below 1e-11 for max|B| up to 10, and 1e-9 leaves two
// more orders of magnitude. GC-FR and IS-GC sum with weights 1, well inside the same bound. The
// runs with independent sampling below miss DGD by more than 1e-3: the test tells them apart.
TEST(SharedSampling, ExactDecodersReproduceDgdWithMinibatches) {
  const int n = 12, s = 2;
  const int64_t steps = 100;
  const double lr = 0.05;
  auto objective = least_squares(n, 240, 6, /*batch=*/4);
  auto even = timing("[timing]\nmodel = \"fixed\"\n", n);
  auto stragglers =
      timing("[timing]\nmodel = \"random_stragglers\"\nq = 0.3\ndelay_mean = 2.0\n", n);
  const std::string dgd = "[method]\nname = \"dgd\"\n";
  const RunResult reference = run_method(dgd + sampling("shared"), objective, *even, steps, lr);
  ASSERT_EQ(reference.trajectory.size(), static_cast<size_t>(steps));
  for (const char* name : {"gc-fr", "gc-cr", "is-gc-fr"}) {
    const RunResult r =
        run_method(method_toml(name, s) + sampling("shared"), objective, *stragglers, steps, lr);
    EXPECT_LE(max_relative_gap(r.trajectory, reference.trajectory), 1e-9) << name;
    if (std::string(name) == "gc-cr") {
      EXPECT_GT(r.summary["decode"]["responder_sets_decoded"].get<int64_t>(), 5);
      EXPECT_LE(r.summary["decode"]["max_abs_a_observed"].get<double>(), 100.0);
      EXPECT_LE(r.summary["decode"]["max_decode_residual_observed"].get<double>(), 1e-12);
      EXPECT_GT(r.summary["late_replies"].get<int64_t>(), 0);  // stragglers did straggle
    }
  }
  const RunResult is_gc_cr =
      run_method(method_toml("is-gc-cr", s) + sampling("shared"), objective, *even, steps, lr);
  EXPECT_LE(max_relative_gap(is_gc_cr.trajectory, reference.trajectory), 1e-9);
  for (const UpdateRecord& record : is_gc_cr.records) ASSERT_EQ(record.responders, n / (s + 1));

  // Each worker drawing its own rows: the copies differ, and the exact decoder amplifies the
  // differences instead of cancelling them (the GC-CR).
  const RunResult independent_dgd =
      run_method(dgd + sampling("independent"), objective, *even, steps, lr);
  for (const char* name : {"gc-fr", "gc-cr"}) {
    const RunResult r = run_method(method_toml(name, s) + sampling("independent"), objective,
                                   *stragglers, steps, lr);
    EXPECT_GT(max_relative_gap(r.trajectory, independent_dgd.trajectory), 1e-3) << name;
  }
}

// ---- fixed sampling: PGC-CR as the authors run it ----

// The PGC authors' regime (n = 12, s = 2, relaxed decoding, SGD with lr 0.01 and no momentum, the
// first `batch` rows of each partition at every step) on least squares, computed by hand: the
// warm-up fills every cache at x_0; step t >= 1 refreshes slot t mod c, so worker i's cache holds
// g_{i+k}(x_{v_k(t)}) with v_k(t) the last step u <= t with u ≡ k (mod c) (0, the warm-up, if
// none); ĝ_t = (1/n)·μ·Σ_{i∈F} m_i with μ = n/((n − s)(s + 1)) = 0.4. Workers 10 and 11 are so slow
// that F = {0..9} at every step here, and nothing else arrives before a close, so the reported
// loss is the mean over i ∈ F of the fresh minibatch loss (the c warm-up losses' mean at step 0).
//
// Tolerance 1e-12: the run and the hand computation differ only in the order of the ~30 additions
// of each step (≤ 30u ≈ 3e-15 relative per step, 4 steps).
TEST(FixedSampling, PgcCrStepMatchesTheHandComputation) {
  const int n = 12, s = 2, c = s + 1, b = 3;
  const int64_t steps = 4;
  const double lr = 0.01, mu = 12.0 / (10.0 * 3.0);
  auto objective = least_squares(n, 10 * n, 3, b);
  auto model =
      timing("[timing]\nmodel = \"fixed\"\ntau = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50, 50]\n", n);
  const RunResult r =
      run_method(method_toml("pgc-cr", s) + sampling("fixed"), objective, *model, steps, lr);
  ASSERT_EQ(r.trajectory.size(), static_cast<size_t>(steps));

  // f_p and g_p on the first b rows of D_p: f = ‖Ax − y‖²/(2b), g = Aᵀ(Ax − y)/b.
  auto first_rows = [&](int p, const Vec& x, Vec& g) {
    const Dataset& part = objective->partition(p);
    const Eigen::MatrixXd a = part.features.topRows(b);
    const Vec residual = a * x - part.labels.head(b);
    g = a.transpose() * residual / b;
    return 0.5 * residual.squaredNorm() / b;
  };
  std::vector<Vec> x = {Vec::Zero(3)};
  Vec g;
  for (int64_t t = 0; t < steps; ++t) {
    Vec direction = Vec::Zero(3);
    double loss = 0;
    for (int i = 0; i < n - s; ++i) {
      for (int k = 0; k < c; ++k) {
        int64_t version = t - ((t - k) % c + c) % c;  // last u <= t with u ≡ k (mod c)
        if (version < 0) version = 0;
        const double f = first_rows((i + k) % n, x[version], g);
        direction += g;
        if (t == 0) loss += f / c;           // the warm-up: c fresh partitions
        if (t > 0 && k == t % c) loss += f;  // the one fresh partition
      }
    }
    x.push_back(x[t] - lr * (mu / n) * direction);
    const Vec& actual = r.trajectory[t];
    EXPECT_LE((actual - x[t + 1]).norm(), 1e-12 * std::max(1.0, x[t + 1].norm())) << "step " << t;
    EXPECT_NEAR(r.records[t].loss, loss / (n - s), 1e-12 * loss / (n - s)) << "step " << t;
    EXPECT_EQ(r.records[t].responders, n - s);
  }
  // Other rows give another step: the test sees which rows were used.
  const RunResult shared =
      run_method(method_toml("pgc-cr", s) + sampling("shared"), objective, *model, steps, lr);
  EXPECT_GT((shared.trajectory.back() - x.back()).norm(), 1e-6 * x.back().norm());
}

// ---- the reported loss and PGC-FR's lockstep ----

// n = 6, s = 1: groups {0, 1}, {2, 3}, {4, 5}. With τ = [1, 1.5, 2, 6, 3, 7] and c = 2 units per
// first job, step 0's messages arrive at 2 (worker 0), 3 (1), 4 (2), 6 (4), 12 (3), 14 (5).
std::unique_ptr<TimingModel> two_group_timing() {
  return timing("[timing]\nmodel = \"fixed\"\ntau = [1.0, 1.5, 2.0, 6.0, 3.0, 7.0]\n", 6);
}

// f_p at x (full partitions: batch 0).
double partition_loss(const Objective& objective, int p, const Vec& x) {
  auto scratch = objective.make_scratch();
  Vec g;
  return objective.full_partition_gradient(p, x, g, *scratch);
}

// Step 0 of the methods whose first job evaluates all c partitions at x_0 (a message's loss is the
// mean of its c partition losses): the reported loss averages every message in by the close, not
// only those the decoder used. FR closes at 6 s with workers 0, 1, 2, 4 in (3 used, one per
// group); IS-GC-FR waits for n − s = 5 messages (worker 3's at 12 s), of which it uses 3.
TEST(ReportedLoss, AveragesEveryMessageReceivedByTheClose) {
  const int n = 6;
  auto objective = least_squares(n, 60, 3, /*batch=*/0);
  auto model = two_group_timing();
  const Vec x0 = Vec::Zero(3);
  std::vector<double> group_loss;  // the mean loss of each group's two partitions at x_0
  for (int g = 0; g < 3; ++g) {
    group_loss.push_back(
        (partition_loss(*objective, 2 * g, x0) + partition_loss(*objective, 2 * g + 1, x0)) / 2);
  }
  const std::map<std::string, std::vector<int>> arrivals = {
      {"gc-fr", {0, 1, 2, 4}}, {"pgc-fr", {0, 1, 2, 4}}, {"is-gc-fr", {0, 1, 2, 3, 4}}};
  for (const auto& [name, in] : arrivals) {
    const RunResult r = run_method(method_toml(name, 1), objective, *model, 1, 0.1);
    double expected = 0;
    for (int w : in) expected += group_loss[w / 2];
    expected /= static_cast<double>(in.size());
    EXPECT_NEAR(r.records[0].loss, expected, 1e-14 * expected) << name;
    EXPECT_EQ(r.records[0].responders, 3) << name;  // the decoder used one message per group
  }
}

// PGC-FR runs in lockstep by default (o_i = 0, the authors' code): at step 1 both members of a
// group refresh the same partition S_i[1]. Step 0 closes at 6 s (above); workers 0, 1, 2, 4 start
// step 1 at once and answer at 7, 7.5, 8 and 9 s while 3 and 5 are still warming up, so step 1
// closes at 9 s with those four in: the reported loss is (f_1 + f_1 + f_3 + f_5)(x_1)/4. Staggered
// (stagger = true), worker 1 refreshes S_1[0] = partition 0 instead: (f_1 + f_0 + f_3 + f_5)/4.
TEST(PgcFr, RunsInLockstepByDefaultAndReportsEveryMessage) {
  const int n = 6;
  const double lr = 0.1;
  auto objective = least_squares(n, 60, 3, /*batch=*/0);
  auto model = two_group_timing();
  // Step 0 decodes the exact gradient (every cache is fresh at x_0): x_1 is gradient descent's.
  const Vec x1 = testing::gradient_descent(*objective, 1, lr)[0];
  auto f = [&](int p) { return partition_loss(*objective, p, x1); };
  const double lockstep = (2 * f(1) + f(3) + f(5)) / 4;
  const double staggered = (f(1) + f(0) + f(3) + f(5)) / 4;
  ASSERT_GT(std::abs(lockstep - staggered), 1e-6 * lockstep);  // the check can tell them apart
  const RunResult by_default = run_method(method_toml("pgc-fr", 1), objective, *model, 2, lr);
  ASSERT_EQ(by_default.records.size(), 2u);
  EXPECT_DOUBLE_EQ(by_default.records[1].time, 9.0);
  EXPECT_NEAR(by_default.records[1].loss, lockstep, 1e-13 * lockstep);
  const RunResult stagger =
      run_method(method_toml("pgc-fr", 1, "stagger = true\n"), objective, *model, 2, lr);
  EXPECT_NEAR(stagger.records[1].loss, staggered, 1e-13 * staggered);
}

// ---- straggler_policy = "queue" ----

// The model each step was computed at: x_0 = 0 and x_t after step t − 1.
const Vec& model_of_step(const RunResult& r, int64_t tag, const Vec& x0) {
  return tag == 0 ? x0 : r.trajectory[tag - 1];
}

// Under the queue policy every worker is sent every step and computes them in order, each at its
// step's model (the PGC authors' Ray actors); under finish a late worker skips to the newest step.
// IS-SGD(k = 1) on 4 workers with random stragglers (Exp(3 s) delays with probability 0.3).
TEST(QueuePolicy, LateWorkersComputeEveryStepInOrderAtItsModel) {
  const int n = 4;
  const int64_t steps = 200;
  auto objective = least_squares(n, 80, 3, /*batch=*/2);
  auto model = timing("[timing]\nmodel = \"random_stragglers\"\nq = 0.3\ndelay_mean = 3.0\n", n);
  const std::string is_sgd = "[method]\nname = \"is-sgd\"\nk = 1\n";
  const Vec x0 = Vec::Zero(3);
  const RunResult queue =
      run_method(is_sgd + "straggler_policy = \"queue\"\n", objective, *model, steps, 0.05);
  ASSERT_EQ(queue.records.size(), static_cast<size_t>(steps));
  EXPECT_EQ(queue.summary["straggler_policy"], "queue");
  EXPECT_GT(queue.summary["queued_jobs"].get<int64_t>(), 0);
  std::vector<int64_t> next_tag(n, 0);
  for (const auto& job : queue.assignments) {
    ASSERT_EQ(job.tag, next_tag[job.worker]) << "worker " << job.worker;
    ++next_tag[job.worker];
    ASSERT_EQ(job.x, model_of_step(queue, job.tag, x0)) << "worker " << job.worker;
  }
  // A queued job whose step was still open counts: some step was decided by a worker that was
  // given that step after the step had begun (from its queue).
  bool queued_job_counted = false;
  for (const auto& job : queue.assignments) {
    const double begun = job.tag == 0 ? 0.0 : queue.records[job.tag - 1].time;
    if (job.tag < steps && job.time > begun && queue.records[job.tag].worker == job.worker) {
      queued_job_counted = true;
    }
  }
  EXPECT_TRUE(queued_job_counted);

  // The same stragglers under finish: a late worker jumps to the newest step.
  const RunResult finish = run_method(is_sgd, objective, *model, steps, 0.05);
  bool skipped = false;
  std::vector<int64_t> last(n, -1);
  for (const auto& job : finish.assignments) {
    skipped = skipped || job.tag > last[job.worker] + 1;
    last[job.worker] = job.tag;
  }
  EXPECT_TRUE(skipped);
}

// PGC-CR under the queue policy: a late worker's pipeline still refreshes every step's partition,
// in order, at that step's model, so when it catches up its cache is at most s steps old.
TEST(QueuePolicy, PipelineOfALateWorkerStaysInStep) {
  const int n = 6, s = 1;
  auto objective = least_squares(n, 60, 3, 0);
  auto model = timing("[timing]\nmodel = \"random_stragglers\"\nq = 0.2\ndelay_mean = 4.0\n", n);
  const RunResult r = run_method(method_toml("pgc-cr", s, "straggler_policy = \"queue\"\n"),
                                 objective, *model, 150, 0.05);
  ASSERT_EQ(r.records.size(), 150u);
  EXPECT_GT(r.summary["queued_jobs"].get<int64_t>(), 0);
  // Every used message's gradients were computed at most s steps before its step.
  for (const auto& [age, count] : r.summary["staleness_histogram"].items()) {
    EXPECT_LE(std::stoi(age), s) << count;
  }
}

// ---- configuration ----

std::string method_error(const std::string& toml) {
  auto objective = least_squares(6, 60, 2, 2);
  try {
    make_method(Config::parse(toml, "bad.toml"), MethodSetup{objective, nullptr, 6, 1});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Sampling, BadValuesAreErrorsNamingTheKey) {
  std::string e = method_error("[method]\nname = \"dgd\"\n" + sampling("some"));
  EXPECT_NE(e.find("training.sampling"), std::string::npos) << e;
  EXPECT_NE(e.find("independent"), std::string::npos) << e;
  e = method_error(method_toml("gc-cr", 1, "straggler_policy = \"later\"\n"));
  EXPECT_NE(e.find("method.straggler_policy"), std::string::npos) << e;
  EXPECT_NE(e.find("queue"), std::string::npos) << e;
}

// Asynchronous workers own their partition and keep a stream each: "independent" (or no key) is
// accepted, "shared" and "fixed" are refused with the reason.
TEST(Sampling, AsynchronousMethodsAcceptOnlyIndependent) {
  for (const char* name : {"asgd", "delay-adaptive-asgd", "rennala"}) {
    const std::string method = std::string("[method]\nname = \"") + name + "\"\n";
    EXPECT_EQ(method_error(method), "") << name;
    EXPECT_EQ(method_error(method + sampling("independent")), "") << name;
    for (const char* mode : {"shared", "fixed"}) {
      const std::string e = method_error(method + sampling(mode));
      EXPECT_NE(e.find("training.sampling"), std::string::npos) << name << ": " << e;
      EXPECT_NE(e.find("asynchronous"), std::string::npos) << e;
      EXPECT_NE(e.find(name), std::string::npos) << e;
    }
  }
}

}  // namespace
}  // namespace pacer
