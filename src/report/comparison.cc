#include "pacer/report/comparison.h"

#include <fmt/format.h>

#include <limits>
#include <string>

#include "pacer/core/error.h"

namespace pacer {

std::string Budget::describe() const {
  switch (kind) {
    case Kind::kSteps:
      return fmt::format("{:.0f} steps", value);
    case Kind::kTime:
      return fmt::format("{:g} s of simulated time", value);
    case Kind::kWork:
      return fmt::format("{:g} work units", value);
  }
  return "";
}

namespace {

// A target quantity over seeds, censored: a seed that did not reach the target contributes its
// end value (a lower bound of what it would have needed).
Estimate censored_estimate(const std::vector<SeedRun>& runs, double SeedRun::*at_target,
                           double SeedRun::*at_end) {
  std::vector<double> values;
  int censored = 0;
  for (const SeedRun& r : runs) {
    values.push_back(r.reached ? r.*at_target : r.*at_end);
    censored += r.reached ? 0 : 1;
  }
  return estimate(values, Scale::kPositive, censored);
}

Estimate plain_estimate(const std::vector<SeedRun>& runs, double SeedRun::*field,
                        Scale scale = Scale::kPositive) {
  std::vector<double> values;
  for (const SeedRun& r : runs) values.push_back(r.*field);
  return estimate(values, scale);
}

}  // namespace

void summarize_method(MethodResult& m, bool has_target) {
  m.reached = 0;
  m.diverged = 0;
  for (const SeedRun& r : m.runs) {
    m.reached += r.reached ? 1 : 0;
    m.diverged += r.diverged ? 1 : 0;
  }
  if (has_target) {
    m.steps_to_target = censored_estimate(m.runs, &SeedRun::steps_to_target, &SeedRun::end_steps);
    m.time_to_target = censored_estimate(m.runs, &SeedRun::time_to_target, &SeedRun::end_time);
    m.work_to_target = censored_estimate(m.runs, &SeedRun::work_to_target, &SeedRun::end_work);
  }
  m.step_time = plain_estimate(m.runs, &SeedRun::step_time);
  m.units_per_job = plain_estimate(m.runs, &SeedRun::units_per_job);
  m.units_per_worker_step = plain_estimate(m.runs, &SeedRun::units_per_worker_step);
  m.final_loss = plain_estimate(m.runs, &SeedRun::final_loss);
  m.tilde_loss = plain_estimate(m.runs, &SeedRun::tilde_loss);
  m.grad_norm_sq = plain_estimate(m.runs, &SeedRun::grad_norm_sq);
  m.test_accuracy = plain_estimate(m.runs, &SeedRun::test_accuracy, Scale::kProportion);
}

// The criterion, smaller is better (see CompareOptions::tune): (seeds that missed the target, then
// the geometric mean time to target, or, when some seed missed it, the geometric mean final F:
// censored times are all about the budget and would rank by noise), or without a target (0,
// geometric mean final F), with +∞ when a seed diverged.
std::pair<int, double> criterion_score(const MethodResult& m, bool has_target) {
  const double inf = std::numeric_limits<double>::infinity();
  if (has_target) {
    const int missed = static_cast<int>(m.runs.size()) - m.reached;
    const double by = missed == 0      ? m.time_to_target.mean
                      : m.diverged > 0 ? inf
                                       : m.final_loss.mean;
    return {missed, std::isnan(by) ? inf : by};
  }
  if (m.diverged > 0 || std::isnan(m.final_loss.mean)) return {0, inf};
  return {0, m.final_loss.mean};
}

namespace {

constexpr const char* kRunsHeader =
    "method,seed,folder,status,reached,diverged,steps_to_target,time_to_target,work_to_target,"
    "end_steps,end_time,end_work,step_time,units_per_job,units_per_worker_step,final_loss,"
    "tilde_loss,grad_norm_sq,test_accuracy,target,budget_kind,budget_value";

// The SeedRun fields of runs.csv, in column order after "diverged".
constexpr double SeedRun::*kRunNumbers[] = {
    &SeedRun::steps_to_target, &SeedRun::time_to_target, &SeedRun::work_to_target,
    &SeedRun::end_steps,       &SeedRun::end_time,       &SeedRun::end_work,
    &SeedRun::step_time,       &SeedRun::units_per_job,  &SeedRun::units_per_worker_step,
    &SeedRun::final_loss,      &SeedRun::tilde_loss,     &SeedRun::grad_norm_sq,
    &SeedRun::test_accuracy};

const char* kind_name(Budget::Kind kind) {
  switch (kind) {
    case Budget::Kind::kSteps:
      return "steps";
    case Budget::Kind::kTime:
      return "time";
    case Budget::Kind::kWork:
      return "work";
  }
  return "";
}

std::string number_text(double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); }

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    fields.push_back(
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

double parse_number(const std::string& field, const std::string& where) {
  if (field.empty()) return kNotAvailable;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != field.size()) fail("{}: expected a number, found '{}'", where, field);
  return v;
}

}  // namespace

std::string seed_runs_csv(const Comparison& c) {
  std::string out = std::string(kRunsHeader) + "\n";
  const std::string target = c.targets.empty() ? "" : number_text(c.targets.front());
  for (const MethodResult& m : c.methods) {
    for (const SeedRun& r : m.runs) {
      out += fmt::format("{},{},{},{},{},{}", m.spec, r.seed, r.folder, r.status, r.reached ? 1 : 0,
                         r.diverged ? 1 : 0);
      for (double SeedRun::*field : kRunNumbers) {
        out += ',';
        out += number_text(r.*field);
      }
      out += fmt::format(",{},{},{}\n", target, kind_name(c.budget.kind), c.budget.value);
    }
  }
  return out;
}

Comparison read_seed_runs(const std::string& csv, const std::string& source) {
  Comparison c;
  size_t line_number = 0;
  for (size_t start = 0; start < csv.size();) {
    size_t end = csv.find('\n', start);
    if (end == std::string::npos) end = csv.size();
    const std::string line = csv.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::string where = fmt::format("{}: line {}", source, line_number);
    if (line_number == 1) {
      if (line != kRunsHeader) fail("{}: not a runs.csv of this pacer (its header differs)", where);
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    constexpr size_t kFields = 6 + std::size(kRunNumbers) + 3;
    if (f.size() != kFields) fail("{}: {} fields, expected {}", where, f.size(), kFields);
    if (c.methods.empty() || c.methods.back().spec != f[0]) {
      c.methods.emplace_back().spec = f[0];
      c.methods.back().folder = f[0];
    }
    SeedRun& r = c.methods.back().runs.emplace_back();
    r.seed = static_cast<uint64_t>(parse_number(f[1], where));
    r.folder = f[2];
    r.status = f[3];
    r.reached = f[4] == "1";
    r.diverged = f[5] == "1";
    for (size_t k = 0; k < std::size(kRunNumbers); ++k) {
      r.*kRunNumbers[k] = parse_number(f[6 + k], where);
    }
    const double target = parse_number(f[6 + std::size(kRunNumbers)], where);
    c.targets = std::isnan(target) ? std::vector<double>{} : std::vector<double>{target};
    const std::string& kind = f[7 + std::size(kRunNumbers)];
    c.budget.kind = kind == "time"   ? Budget::Kind::kTime
                    : kind == "work" ? Budget::Kind::kWork
                                     : Budget::Kind::kSteps;
    c.budget.value = parse_number(f[8 + std::size(kRunNumbers)], where);
  }
  if (c.methods.empty()) fail("{}: no runs", source);
  for (MethodResult& m : c.methods) summarize_method(m, !c.targets.empty());
  c.criterion = c.targets.empty() ? "final F" : "time to target";
  return c;
}

}  // namespace pacer
