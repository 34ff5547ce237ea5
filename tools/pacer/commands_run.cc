// pacer run and pacer profile (cli.h): one run of a configuration, and one profile of its
// workers' job times.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli.h"
#include "pacer/core/config.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/interrupt.h"
#include "pacer/core/log.h"
#include "pacer/core/run_folder.h"
#include "pacer/engine/mpi/runtime.h"
#include "pacer/engine/registry.h"
#include "pacer/report/job_log.h"
#include "pacer/run/experiment.h"

namespace pacer::cli {
namespace {

// How a run's summary says its first target went: reached at which step and time, or not.
std::string format_target(const nlohmann::json& summary) {
  const nlohmann::json& targets = summary["targets"];
  if (targets.empty()) return "no target set";
  const nlohmann::json& t = targets[0];
  if (!t["reached"].get<bool>()) {
    return fmt::format("target loss {} not reached", t["loss"].get<double>());
  }
  return fmt::format("target loss {} reached at step {} (t = {:.2f} s)", t["loss"].get<double>(),
                     t["steps"].get<int64_t>(), t["time"].get<double>());
}

// Whether the run's engine is multi-process, so that continuing it needs the launcher again.
bool launched_by_launcher(const Config& config) {
  const EngineInfo* e = find_engine(config.get_string("engine.name", default_engine()));
  return e != nullptr && e->multi_process;
}

}  // namespace

// `program`: how pacer was started (argv[0]), for the command that continues an interrupted run.
int command_run(const ConfigArgs& args, const std::string& program) {
  if (args.resume.empty() == args.path.empty()) {
    std::fprintf(stderr, "pacer run: give either CONFIG or --resume DIR\n");
    return 2;
  }
  if (!args.resume.empty() && !args.out_dir.empty() && args.out_dir != args.resume) {
    std::fprintf(stderr, "pacer run: --out: a resumed run continues in its own folder, DIR\n");
    return 2;
  }
  // A crash between the two renames of a folder swap (run_folder.h) is repaired before the
  // resumed run's files are read.
  if (!args.resume.empty()) RunFolder::reopen(args.resume);
  Config config = load_config(args);
  RunOptions options;
  options.timeline_figure = true;
  options.resume = !args.resume.empty();
  options.out_dir = options.resume         ? args.resume
                    : args.out_dir.empty() ? default_out_dir(args.path)
                                           : args.out_dir;
  RunOutcome outcome = run_experiment(config, options);
  const nlohmann::json& s = outcome.summary;
  if (outcome.status == "interrupted") {
    std::printf("%s: interrupted after %lld steps, t = %.2f s; log and summary: %s/\n",
                s["method"].get<std::string>().c_str(),
                static_cast<long long>(s["steps"].get<int64_t>()), s["time"].get<double>(),
                options.out_dir.c_str());
    // Under `pacer mpi-rank` the continuation is launched the same way.
    const bool under_rank_supervisor = mpi::rank_supervised();
    std::printf("continue it with: %s%s %srun --resume %s\n",
                !launched_by_launcher(config) ? ""
                : under_rank_supervisor
                    ? "mpirun --mca orte_allowed_exit_without_sync 1 -np <workers + 1> "
                    : "mpirun -np <workers + 1> ",
                shell_word(program).c_str(), under_rank_supervisor ? "mpi-rank " : "",
                shell_word(options.out_dir).c_str());
    return interrupt_exit_status();
  }
  if (outcome.status == "diverged") {
    fail(
        "training diverged at step {}: {} (try a smaller optimizer.lr); the log up to that "
        "point is in {}",
        s["steps"].get<int64_t>(), s.value("divergence", std::string()), options.out_dir);
  }
  if (outcome.status == "too_many_lost") {
    fail("{}; the log up to that point is in {}", s.value("error", std::string()), options.out_dir);
  }
  std::printf("%s: %s after %lld steps, t = %.2f s (mean step %.4f s); %s\n",
              s["method"].get<std::string>().c_str(), outcome.status.c_str(),
              static_cast<long long>(s["steps"].get<int64_t>()), s["time"].get<double>(),
              s["mean_step_time"].get<double>(), format_target(s).c_str());
  const nlohmann::json& fin = s["final"];
  if (fin.contains("test_accuracy")) {
    std::printf("final: full training loss F %.4f, test accuracy %.4f\n",
                fin["full_loss"].get<double>(), fin["test_accuracy"].get<double>());
  } else if (fin.contains("full_loss")) {
    std::printf("final: full training loss F %.6g, |grad F|^2 %.3g\n",
                fin["full_loss"].get<double>(), fin["grad_norm_sq"].get<double>());
  }
  std::printf("log, summary and resolved config: %s/\n", options.out_dir.c_str());
  return 0;
}

// `pacer profile` (DESIGN.md section 9): `jobs` jobs of the config's model on every worker, as a
// trace. On the simulator in this process (experiment.h, profile_jobs); on MPI a DGD run of
// `jobs` steps on the real ranks, whose jobs.csv gives the durations (job_log.h).
int command_profile(const ConfigArgs& args, int jobs) {
  Config config = load_config(args);
  const std::string out = args.out_dir.empty()
                              ? "runs/profile-" + std::filesystem::path(args.path).stem().string()
                              : args.out_dir;
  const std::string engine = config.get_string("engine.name", default_engine());
  const EngineInfo* info = find_engine(engine);
  const bool in_process = !info || !info->multi_process;
  std::string trace;
  if (in_process) {
    trace = profile_jobs(config, jobs);
    make_directories(out);
  } else {
    if (jobs < 1) fail("--jobs {}: expected at least 1 job per worker", jobs);
    // K steps of DGD and nothing else: no target, limit, evaluation or checkpoint of the
    // config's own run stops it early or costs time, and every job is recorded.
    for (const char* key : {"method", "target", "max_time", "max_work", "eval_every_s",
                            "checkpoint", "record.jobs_limit"}) {
      if (config.has(key)) config.unset(key);
    }
    config.set_string("method.name", "dgd");
    config.set_int("max_steps", jobs);
    config.set_int("eval_every", 0);
    // The default's drains would cost the profile time.
    config.set("checkpoint.every_s=0", "pacer profile");
    config.set("eval_final=false", "pacer profile");
    config.set("record.jobs=true", "pacer profile");
    RunOptions options;
    options.out_dir = out + "/run";
    run_experiment(config, options);
    trace = trace_from_jobs_csv(out + "/run/jobs.csv").csv;
  }
  write_file_atomic(out + "/trace.csv", trace);
  std::printf(
      "profile: %d jobs on each worker (%s engine%s); trace: %s/trace.csv\n"
      "fit the timing models: pacer fit %s/trace.csv\n"
      "replay it: --set timing.model=trace --set timing.file=%s/trace.csv, or pacer advise %s "
      "--trace %s/trace.csv\n",
      jobs, engine.c_str(), in_process ? ", this process, one job at a time" : ", every rank",
      out.c_str(), out.c_str(), out.c_str(), args.path.c_str(), out.c_str());
  return 0;
}

}  // namespace pacer::cli
