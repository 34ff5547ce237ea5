// Replayed compute times: timing.model = "trace".
//
// The file is a CSV with the header "worker,duration" and one row per recorded job: a worker
// index in [0, n) and that job's duration in seconds per work unit (> 0). Blank lines are
// skipped; a trailing '\r' (Windows line ends) is ignored.
//
// Preparing the rows, in this order (TraceOptions; the keys are described in timing_model.h):
//   1. M = the median of all rows of all workers pooled (an even count takes the midpoint of
//      the two middle rows).
//   2. Classify (only when the straggler frequency is != 1): a row d is a straggler row when
//      d > threshold·M, on the rows as read.
//   3. Transform (only when the slowdown is != 1): every row d > M becomes M + slowdown·(d − M).
//      Rows <= M are kept, so M is also the median of the transformed rows.
// Replay "order": worker i replays its own rows in file order and starts again from its first
// row when they run out. Replay "bootstrap": each job of worker i draws one of its rows uniformly
// (reweighted between the two groups of step 2 when the frequency is != 1).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <string_view>

#include "models.h"
#include "pacer/core/error.h"

namespace pacer::timing {
namespace {

std::string_view trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

// Parses all of `text` as a T; false if it is not exactly one number.
template <typename T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

double mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// The median of all rows pooled; the midpoint of the two middle values for an even count.
double pooled_median(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const std::vector<double>& r : rows) all.insert(all.end(), r.begin(), r.end());
  PACER_CHECK(!all.empty());
  const size_t half = all.size() / 2;
  std::nth_element(all.begin(), all.begin() + half, all.end());
  const double upper = all[half];
  if (all.size() % 2 == 1) return upper;
  const double lower = *std::max_element(all.begin(), all.begin() + half);
  return (lower + upper) / 2;
}

// One worker's rows, ready to replay: after the slowdown, and split for a reweighted bootstrap.
struct WorkerRows {
  std::vector<double> rows;          // every row, transformed, in file order
  std::vector<double> stragglers;    // the straggler rows, transformed (reweighted only)
  std::vector<double> others;        // the other rows, transformed (reweighted only)
  double straggler_probability = 0;  // min(1, frequency·p_i), the chance a draw is a straggler
  // Whether draws choose a group first: a frequency != 1 and both groups non-empty.
  bool reweighted() const { return !stragglers.empty() && !others.empty(); }
};

// Prepares `raw` (one worker's rows as read) given the pooled median M: classifies on the raw
// rows (when options.frequency != 1), then transforms (when options.slowdown != 1).
WorkerRows prepare_rows(const std::vector<double>& raw, double median,
                        const TraceOptions& options) {
  WorkerRows w;
  for (const double d : raw) {
    const double row =
        options.slowdown != 1 && d > median ? median + options.slowdown * (d - median) : d;
    w.rows.push_back(row);
    if (options.frequency == 1) continue;
    (d > options.threshold * median ? w.stragglers : w.others).push_back(row);
  }
  const double p = static_cast<double>(w.stragglers.size()) / static_cast<double>(raw.size());
  w.straggler_probability = std::min(1.0, options.frequency * p);
  if (!w.reweighted()) {
    w.stragglers.clear();
    w.others.clear();
  }
  return w;
}

// A uniformly drawn entry of `values` (non-empty).
double pick(const std::vector<double>& values, Rng& rng) {
  return values[rng.uniform_int(values.size())];
}

class TraceModel : public TimingModel {
 public:
  TraceModel(std::vector<WorkerRows> workers, bool bootstrap)
      : workers_(std::move(workers)), bootstrap_(bootstrap), next_(workers_.size(), 0) {}
  std::string name() const override { return "trace"; }
  int num_workers() const override { return static_cast<int>(workers_.size()); }

  // Base 0, extra u·row. Order: consumes the worker's next row, drawing nothing from `rng`.
  // Bootstrap: draws a row from `rng` (one uniform_int; reweighted, a uniform() first).
  Duration compute_time(int worker, double units, int64_t, Rng& rng) const override {
    PACER_CHECK(worker >= 0 && worker < num_workers());
    PACER_CHECK(units > 0);
    const double per_unit = bootstrap_ ? draw(workers_[worker], rng) : replay(worker);
    return {0.0, units * per_unit};
  }

  // The replay positions, in both modes. Bootstrap has no position: its positions stay 0 and
  // the draws' state lives in the worker's Rng, which the Rng's owner checkpoints.
  void checkpoint(StateArchive& a) override {
    a.section("trace_model");
    a.expect(static_cast<int64_t>(workers_.size()), "workers");
    a.io(next_);
    for (size_t i = 0; i < next_.size(); ++i) {
      if (next_[i] >= workers_[i].rows.size())
        a.mismatch("a replay position past the trace's rows");
    }
  }

  // Exactly the expectation of a draw: the mean of the (transformed) rows, or reweighted,
  // q·mean(straggler rows) + (1 − q)·mean(other rows) with q = min(1, frequency·p_i).
  std::optional<double> mean_unit_time(int worker) const override {
    const WorkerRows& w = workers_[worker];
    if (!w.reweighted()) return mean(w.rows);
    const double q = w.straggler_probability;
    return q * mean(w.stragglers) + (1 - q) * mean(w.others);
  }

 private:
  double replay(int worker) const {
    const std::vector<double>& rows = workers_[worker].rows;
    size_t& next = next_[worker];
    const double per_unit = rows[next];
    next = (next + 1) % rows.size();
    return per_unit;
  }
  static double draw(const WorkerRows& w, Rng& rng) {
    if (!w.reweighted()) return pick(w.rows, rng);
    return pick(rng.uniform() < w.straggler_probability ? w.stragglers : w.others, rng);
  }

  std::vector<WorkerRows> workers_;
  bool bootstrap_;
  // Replay position of each worker (the row its next job consumes; order mode only).
  // compute_time advances it, so one TraceModel belongs to one run and is not safe to share
  // between threads.
  mutable std::vector<size_t> next_;
};

}  // namespace

std::vector<std::vector<double>> read_trace_rows(const std::string& path, int workers,
                                                 std::string_view what) {
  PACER_CHECK(workers > 0);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open the {}", path, what);

  std::vector<std::vector<double>> rows;
  std::string line;
  bool header_seen = false;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const size_t comma = text.find(',');
    const std::string_view first = trim(text.substr(0, comma));
    const std::string_view second =
        comma == std::string_view::npos ? std::string_view() : trim(text.substr(comma + 1));
    if (!header_seen) {
      if (first != "worker" || second != "duration") {
        fail("{}:{}: expected the header \"worker,duration\", got \"{}\"", path, number, text);
      }
      header_seen = true;
      continue;
    }
    int64_t worker = 0;
    if (!parse_number(first, worker)) {
      fail("{}:{}: expected a worker index, got \"{}\"", path, number, first);
    }
    if (worker < 0 || worker >= workers) {
      fail("{}:{}: worker index {} out of range: expected 0..{}", path, number, worker,
           workers - 1);
    }
    double duration = 0;
    if (!parse_number(second, duration) || !(duration > 0) || !std::isfinite(duration)) {
      fail("{}:{}: expected a duration in seconds per work unit (a positive number), got \"{}\"",
           path, number, second);
    }
    if (static_cast<size_t>(worker) >= rows.size()) rows.resize(worker + 1);
    rows[worker].push_back(duration);
  }
  if (in.bad()) fail("{}: read error", path);
  if (!header_seen) fail("{}: empty {}, expected the header \"worker,duration\"", path, what);
  return rows;
}

std::unique_ptr<TimingModel> make_trace(const std::string& path, int workers,
                                        const TraceOptions& options) {
  PACER_CHECK(options.slowdown > 0 && options.frequency > 0 && options.threshold > 1);
  PACER_CHECK(options.bootstrap || options.frequency == 1);
  std::vector<std::vector<double>> rows =
      read_trace_rows(path, workers, "timing trace (timing.file)");
  rows.resize(workers);
  for (int i = 0; i < workers; ++i) {
    if (rows[i].empty()) {
      fail(
          "{}: no rows for worker {} (every worker 0..{} needs at least one; the run has {} "
          "workers)",
          path, i, workers - 1, workers);
    }
  }
  const double median = pooled_median(rows);
  std::vector<WorkerRows> prepared;
  for (const std::vector<double>& raw : rows)
    prepared.push_back(prepare_rows(raw, median, options));
  return std::make_unique<TraceModel>(std::move(prepared), options.bootstrap);
}

}  // namespace pacer::timing
