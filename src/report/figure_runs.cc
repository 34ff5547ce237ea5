// What a comparison's figures are drawn from (comparison_figures.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "comparison_figures.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"

namespace pacer::figure {
namespace {

std::string seed_folder(const MethodResult& m, const SeedRun& r) {
  return r.folder.empty() ? fmt::format("{}/seed{}", m.folder, r.seed) : r.folder;
}

// The CSV file `folder`/`file`, or nothing (noted in `missing`).
std::optional<Table> read_run_table(const std::string& folder, const std::string& file,
                                    std::vector<std::string>& missing) {
  if (!std::filesystem::exists(folder + "/" + file)) {
    missing.push_back(folder + "/" + file);
    return std::nullopt;
  }
  try {
    return read_table(folder + "/" + file);
  } catch (const Error& e) {
    missing.push_back(e.what());
    return std::nullopt;
  }
}

// The clock every summary read states; kUnknown when one does not say or two disagree.
Clock runs_clock(const std::vector<MethodFiles>& methods) {
  std::optional<Clock> clock;
  for (const MethodFiles& m : methods) {
    for (const SeedFiles& s : m.seeds) {
      if (!s.summary) continue;
      const nlohmann::json& j = *s.summary;
      const Clock here = j.contains("clock") && j["clock"].is_string()
                             ? parse_clock(j["clock"].get<std::string>())
                             : Clock::kUnknown;
      if (clock && *clock != here) return Clock::kUnknown;
      clock = here;
    }
  }
  return clock.value_or(Clock::kUnknown);
}

}  // namespace

ComparisonRuns read_comparison_runs(const std::string& dir, const Comparison& c,
                                    std::vector<std::string>& missing) {
  ComparisonRuns runs;
  runs.c = &c;
  runs.methods.resize(c.methods.size());
  std::vector<std::string> specs;
  for (size_t m = 0; m < c.methods.size(); ++m) {
    specs.push_back(c.methods[m].spec);
    for (const SeedRun& r : c.methods[m].runs) {
      if (r.diverged) {
        ++runs.methods[m].diverged_left_out;
        continue;
      }
      SeedFiles files;
      files.seed = r.seed;
      const std::string folder = dir + "/" + seed_folder(c.methods[m], r);
      files.evals = read_run_table(folder, "evals.csv", missing);
      files.trace = read_run_table(folder, "trace.csv", missing);
      try {
        files.summary = nlohmann::json::parse(read_file(folder + "/summary.json"));
      } catch (const std::exception&) {
        missing.push_back(folder + "/summary.json");
      }
      runs.methods[m].seeds.push_back(std::move(files));
    }
  }
  runs.styles = method_styles(specs);
  runs.clock = runs_clock(runs.methods);
  return runs;
}

std::string comparison_title(const ComparisonRuns& runs, const std::string& what, size_t methods,
                             const std::vector<uint64_t>& seeds) {
  const Comparison& c = *runs.c;
  std::string title = c.name.empty() ? what : fmt::format("{}: {}", c.name, what);
  std::vector<std::string> parts = {fmt::format("{} method{}", methods, methods == 1 ? "" : "s")};
  if (!seeds.empty()) parts.push_back(describe_seeds(seeds));
  const std::string budget = describe_budget(c.budget, runs.clock);
  if (!budget.empty()) {
    parts.push_back(fmt::format(
        "{} per run{}", budget,
        c.budget.stop_at_target && !c.targets.empty() ? ", stopping at the target" : ""));
  }
  return title + "\n" + fmt::format("{}", fmt::join(parts, ", "));
}

std::string fewer_seeds_note(const Comparison& c, const std::vector<std::vector<uint64_t>>& drawn) {
  std::vector<uint64_t> all;
  for (const auto& seeds : drawn) all.insert(all.end(), seeds.begin(), seeds.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  // The methods with fewer seeds, grouped by their seeds (in order of first appearance); a group
  // of more than three is counted rather than listed (advise's 26 methods on 5 of 30 seeds).
  std::vector<std::pair<std::vector<uint64_t>, std::vector<std::string>>> groups;
  for (size_t m = 0; m < drawn.size() && m < c.methods.size(); ++m) {
    std::vector<uint64_t> seeds = drawn[m];
    std::sort(seeds.begin(), seeds.end());
    seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
    if (seeds.empty() || seeds == all) continue;
    auto group =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == seeds; });
    if (group == groups.end()) group = groups.insert(groups.end(), {seeds, {}});
    group->second.push_back(c.methods[m].spec);
  }
  std::vector<std::string> fewer;
  for (const auto& [seeds, specs] : groups) {
    const std::string who = specs.size() > 3 ? fmt::format("{} methods", specs.size())
                                             : fmt::format("{}", fmt::join(specs, ", "));
    fewer.push_back(fmt::format("{} ({})", who, describe_seeds(seeds)));
  }
  if (fewer.empty()) return "";
  return fmt::format("; fewer seeds for {}", fmt::join(fewer, "; "));
}

std::string line_style(const ComparisonRuns& runs, size_t m, double width) {
  return fmt::format("lw {} lc rgb '{}' dt {}", num(width), runs.styles[m].colour,
                     runs.styles[m].dash);
}

std::vector<double> json_doubles(const nlohmann::json& j) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  for (const auto& v : j) out.push_back(v.is_number() ? v.get<double>() : std::nan(""));
  return out;
}

}  // namespace pacer::figure
