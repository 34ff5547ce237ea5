// Replayed compute times: timing.model = "trace".
//
// The file is a CSV with the header "worker,duration" and one row per recorded job: a worker
// index in [0, n) and that job's duration in seconds per work unit (> 0). Blank lines are
// skipped; a trailing '\r' (Windows line ends) is ignored. Worker i replays its own rows in file
// order and starts again from its first row when they run out.

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

class TraceModel : public TimingModel {
 public:
  explicit TraceModel(std::vector<std::vector<double>> rows)
      : rows_(std::move(rows)), next_(rows_.size(), 0) {}
  std::string name() const override { return "trace"; }
  int num_workers() const override { return static_cast<int>(rows_.size()); }

  // Consumes the worker's next row; base 0, extra u·row. Draws nothing from `rng`.
  Duration compute_time(int worker, double units, int64_t, Rng&) const override {
    PACER_CHECK(worker >= 0 && worker < num_workers());
    PACER_CHECK(units > 0);
    const std::vector<double>& rows = rows_[worker];
    size_t& next = next_[worker];
    const double per_unit = rows[next];
    next = (next + 1) % rows.size();
    return {0.0, units * per_unit};
  }

  void checkpoint(StateArchive& a) override {
    a.section("trace_model");
    a.expect(static_cast<int64_t>(rows_.size()), "workers");
    a.io(next_);
    for (size_t i = 0; i < next_.size(); ++i) {
      if (next_[i] >= rows_[i].size()) a.mismatch("a replay position past the trace's rows");
    }
  }

  std::optional<double> mean_unit_time(int worker) const override {
    const std::vector<double>& rows = rows_[worker];
    return std::accumulate(rows.begin(), rows.end(), 0.0) / static_cast<double>(rows.size());
  }

 private:
  std::vector<std::vector<double>> rows_;
  // Replay position of each worker (the row its next job consumes). compute_time advances it,
  // so one TraceModel belongs to one run and is not safe to share between threads.
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

std::unique_ptr<TimingModel> make_trace(const std::string& path, int workers) {
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
  return std::make_unique<TraceModel>(std::move(rows));
}

}  // namespace pacer::timing
