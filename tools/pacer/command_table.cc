// The table of pacer's commands (cli.h): each adds its options to its CLI11 subcommand and
// returns what runs it once the command line is parsed.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli.h"
#include "pacer/core/error.h"

namespace pacer::cli {
namespace {

Parsed define_run(CLI::App& sub) {
  auto args = std::make_shared<ConfigArgs>();
  add_config_args(&sub, *args, /*resumable=*/true);
  return {[args](int, char** argv) { return command_run(*args, argv[0]); }, args.get()};
}

// Options shared by compare and sweep (sweep passes them to every cell's comparison).
void add_comparison_options(CLI::App& sub, std::string& methods, CompareOptions& options,
                            bool in_cells) {
  sub.add_option("--methods", methods,
                 in_cells ? "comma-separated method specs, as for compare"
                          : "comma-separated method specs, e.g. dgd,is-sgd:k=2")
      ->required();
  sub.add_option(
      "--seeds", options.seeds,
      in_cells ? "seeds per cell (seed, seed+1, ...)" : "number of seeds (seed, seed+1, ...)");
  sub.add_option("--budget", options.budget,
                 in_cells ? "as for compare, in every cell"
                          : "time=SECONDS, work=UNITS or steps=UPDATES for every method (default: "
                            "equal simulated time with asynchronous methods, else max_steps)");
  sub.add_option("--tune", options.tune,
                 in_cells ? "as for compare, in every cell"
                          : "KEY=v1,v2,...: choose each method's value on tuning seeds after the "
                            "reported ones, e.g. optimizer.lr=0.01,0.03,0.1,0.3");
  sub.add_option("--tune-seeds", options.tuning_seeds,
                 in_cells ? "as for compare" : "seeds per tuning value (default 2)");
  sub.add_option("--baseline", options.baseline,
                 in_cells ? "as for compare: every cell's against.csv holds each method against it"
                          : "a spec of --methods to hold every method against, seed by seed "
                            "(against.csv, report.md)");
}

Parsed define_compare(CLI::App& sub) {
  struct State {
    ConfigArgs args;
    std::string methods;
    CompareOptions options;
  };
  auto st = std::make_shared<State>();
  add_config_args(&sub, st->args);
  add_comparison_options(sub, st->methods, st->options, /*in_cells=*/false);
  return {[st](int, char**) { return command_compare(st->args, st->methods, st->options); },
          &st->args};
}

Parsed define_sweep(CLI::App& sub) {
  struct State {
    ConfigArgs args;
    std::string methods;
    CompareOptions options;
    SweepArgs grid;
  };
  auto st = std::make_shared<State>();
  add_config_args(&sub, st->args);
  add_comparison_options(sub, st->methods, st->options, /*in_cells=*/true);
  sub.add_option("--grid", st->grid.grids,
                 "KEY=v1,v2,...: a grid axis (repeat for up to three; the first varies slowest)")
      ->required();
  sub.add_option("--jobs", st->grid.jobs,
                 "cells run at once (default 0: one per available processor)");
  return {[st](int, char**) { return command_sweep(st->args, st->methods, st->options, st->grid); },
          &st->args};
}

Parsed define_data(CLI::App& sub) {
  auto path = std::make_shared<std::string>();
  sub.require_subcommand(1);
  CLI::App* info = sub.add_subcommand("info", "print what a data file holds");
  info->add_option("file", *path, "IDX (.gz), CIFAR-10 binary, LIBSVM, CSV, .npy or .npz file")
      ->required();
  return {[path](int, char**) { return command_data_info(*path); }, nullptr};
}

Parsed define_fit(CLI::App& sub) {
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  sub.add_option("trace", paths->first,
                 "a trace: CSV worker,duration (seconds per work unit), optionally with step and "
                 "units columns")
      ->required();
  sub.add_option("--out", paths->second, "output folder (default runs/fit-<trace name>)");
  return {[paths](int, char**) { return command_fit(paths->first, paths->second); }, nullptr};
}

Parsed define_stragglers(CLI::App& sub) {
  struct State {
    std::string input, out;
    int top = 5;
  };
  auto st = std::make_shared<State>();
  sub.add_option("input", st->input,
                 "a run folder (with jobs.csv), a jobs.csv, or a trace (worker,duration[,step]"
                 "[,units])")
      ->required();
  sub.add_option("--out", st->out, "output folder (default runs/stragglers-<input name>)");
  sub.add_option("--top", st->top, "how many of the slowest workers to list (5)");
  return {[st](int, char**) { return command_stragglers(st->input, st->out, st->top); }, nullptr};
}

Parsed define_validate(CLI::App& sub) {
  struct State {
    ConfigArgs args;
    ValidateOptions options;
  };
  auto st = std::make_shared<State>();
  ValidateOptions& o = st->options;
  add_config_args(&sub, st->args);
  sub.add_option(
      "--methods", o.methods,
      "method specs to run and predict, with dgd (default dgd,gc-cr,pgc-cr,rescaled-asgd)");
  sub.add_option("--seeds", o.seeds, "replay seeds per prediction (default 5)");
  sub.add_option("--steps", o.steps, "steps (updates) per run (default: the config's max_steps)");
  return {[st](int, char**) { return command_validate(st->args, st->options); }, &st->args};
}

Parsed define_claims(CLI::App& sub) {
  struct State {
    std::string claims, out, mode = "full", command;
  };
  auto st = std::make_shared<State>();
  sub.add_option("claims", st->claims, "a claims file (configs/claims/*.toml)")->required();
  sub.add_option("out", st->out, "the reproduction's folder (its regimes' comparisons under it)")
      ->required();
  sub.add_option("--mode", st->mode, "how the runs were made: full (default) or quick")
      ->check(CLI::IsMember({"full", "quick"}));
  sub.add_option("--command", st->command, "the command line that made the runs, for report.md");
  return {[st](int, char**) { return command_claims(st->claims, st->out, st->mode, st->command); },
          nullptr};
}

Parsed define_profile(CLI::App& sub) {
  struct State {
    ConfigArgs args;
    int jobs = 50;
  };
  auto st = std::make_shared<State>();
  add_config_args(&sub, st->args);
  sub.add_option("--jobs", st->jobs, "jobs per worker (default 50)");
  return {[st](int, char**) { return command_profile(st->args, st->jobs); }, &st->args};
}

// --s: the s (IS-SGD: k) values advise tries, as positive integers.
std::vector<int> parse_s_values(const std::string& list) {
  std::vector<int> values;
  for (const std::string& s : split_method_list(list)) {
    char* end = nullptr;
    const long value = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || value < 1) fail("--s {}: expected positive integers, e.g. 1,2,3", s);
    values.push_back(static_cast<int>(value));
  }
  return values;
}

Parsed define_advise(CLI::App& sub) {
  struct State {
    ConfigArgs args;
    AdviseOptions options;
    std::string s = "1,2,3";
  };
  auto st = std::make_shared<State>();
  AdviseOptions& o = st->options;
  add_config_args(&sub, st->args);
  sub.add_option("--trace", o.trace,
                 "measured job times: a worker,duration CSV (pacer profile) or a run's jobs.csv")
      ->required();
  sub.add_option("--seeds", o.seeds, "bootstrap seeds per method (default 5)");
  sub.add_option("--budget", o.budget,
                 "as for compare; default: found from the runs (see pacer advise's report)");
  sub.add_option("--budget-multiple", o.budget_multiple,
                 "the budget is this many times the tuning leader's slowest time (default 3)");
  sub.add_option("--tune", o.tune,
                 "KEY=v1,v2,... each method's value chosen on the tuning seeds (default "
                 "optimizer.lr at lr/3, lr, 3 lr; none: no tuning)");
  sub.add_option("--tune-seeds", o.tuning_seeds,
                 "tuning seeds after the reported ones (default 2)");
  sub.add_option("--max-seeds", o.max_seeds,
                 "seeds at most for methods tied with the leader (default 30)");
  sub.add_option("--methods", o.methods, "method specs to rank (default: every applicable method)");
  sub.add_option("--s", st->s, "s (IS-SGD: k) values tried by default (default 1,2,3)");
  return {[st](int, char**) {
            st->options.s_values = parse_s_values(st->s);
            return command_advise(st->args, st->options);
          },
          &st->args};
}

Parsed define_timeline(CLI::App& sub) {
  auto st = std::make_shared<TimelineArgs>();
  sub.add_option("dir", st->dir, "a run folder (with jobs.csv)")->required();
  CLI::Option* from = sub.add_option(
      "--from", st->from,
      "window start, seconds (with --to; written to timeline-FROM-TO.*; default: the run's "
      "window, record.timeline or from the start until 20 jobs per worker have ended)");
  CLI::Option* to = sub.add_option("--to", st->to, "window end, seconds (see --from)");
  sub.add_flag("--all", st->all, "every job of the run (timeline-all.*)");
  sub.add_option("--format", st->format,
                 "figure (.gp, .png, .svg), chrome (the Chrome trace .json), or both (default)")
      ->check(CLI::IsMember({"figure", "chrome", "both"}));
  return {[st, from, to](int, char**) {
            st->window = from->count() > 0 || to->count() > 0;
            return command_timeline(*st);
          },
          nullptr};
}

// main.cc hands `pacer mpi-rank ...` to command_mpi_rank before CLI11 parses anything: every word
// after mpi-rank is the supervised command's. The entry is here for --help and this usage error.
Parsed define_mpi_rank(CLI::App&) {
  return {[](int, char**) { return command_mpi_rank({}); }, nullptr};
}

Parsed define_methods(CLI::App&) {
  return {[](int, char**) { return command_methods(); }, nullptr};
}

Parsed define_version(CLI::App&) {
  return {[](int, char**) { return command_version(); }, nullptr};
}

}  // namespace

const std::vector<CommandDef>& command_table() {
  static const std::vector<CommandDef> table = {
      {"run", "train with one method; writes log.csv, summary.json", define_run},
      {"compare", "run several methods and print one table", define_compare},
      {"sweep", "run a comparison in every cell of a grid of keys; regime map", define_sweep},
      {"data", "inspect data files", define_data},
      {"fit", "fit the timing models to a measured trace", define_fit},
      {"stragglers", "per-worker straggler report of a run folder, a jobs.csv or a trace",
       define_stragglers},
      {"profile", "time jobs of the config's model on every worker; writes a trace for fit/advise",
       define_profile},
      {"advise", "simulate every method on a measured trace and recommend one", define_advise},
      {"validate", "run methods for real and hold them against the simulator's prediction",
       define_validate},
      {"claims", "judge a paper's claims file on a reproduction's runs; writes report.md",
       define_claims},
      {"timeline", "draw workers x time from a run folder's jobs.csv, and its Chrome trace",
       define_timeline},
      {"mpi-rank",
       "run one rank of an MPI job as `pacer COMMAND...` in a child process, so that the job "
       "outlives a dead worker on every host (docs/mpi.md)",
       define_mpi_rank},
      {"methods", "list the methods, their main parameter and what each does", define_methods},
      {"version", "print version and build information", define_version},
  };
  return table;
}

}  // namespace pacer::cli
