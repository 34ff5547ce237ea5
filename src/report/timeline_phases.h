// The phases of the jobs of a jobs.csv over a window (include/pacer/report/timeline.h), shared
// by the timeline's figure (timeline.cc) and its Chrome trace (timeline_trace.cc). Private to
// src/experiment.
#ifndef PACER_SRC_EXPERIMENT_TIMELINE_PHASES_H_
#define PACER_SRC_EXPERIMENT_TIMELINE_PHASES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pacer/report/job_log.h"
#include "pacer/report/timeline.h"

namespace pacer::timeline {

// A time interval, engine seconds.
struct Span {
  double from = 0, to = 0;
};

// The phases of a job (timeline.h), in the order they happen.
enum PhaseKind { kHeld, kTransfer, kTransferOrWait, kCompute, kInjected, kReply, kOut };
inline constexpr size_t kPhaseKinds = kOut + 1;
// The names of the phases, in PhaseKind order: the figure's legend, its data files' block
// headings and the Chrome trace's event names.
inline constexpr const char* kPhaseNames[] = {
    "held",           "transfer", "transfer or wait",    "compute",
    "injected delay", "reply",    "out (phases unknown)"};
static_assert(std::size(kPhaseNames) == kPhaseKinds);
inline constexpr size_t kFateCount = static_cast<size_t>(JobFate::kUnfinished) + 1;

struct Phase {
  PhaseKind kind;
  Span span;
};

// The phases of `job` (timeline.h), unclipped, in order, each boundary at least the one before;
// those of no positive length are left out.
std::vector<Phase> job_phases(const JobRecord& job);

// [a, b] clipped to `window`; nullopt unless the part inside has a positive length.
std::optional<Span> clip(Span span, Span window);

// The window asked for, or the automatic or whole one (timeline.h) over the jobs of `workers`
// workers; `automatic_jobs` is set to the number of jobs whose end closes an automatic window (0
// otherwise).
Span choose_window(const std::vector<JobRecord>& jobs, int workers, TimelineWindow asked,
                   size_t& automatic_jobs);

// "t = 10.0–20.0 s": the window rounded to three significant digits of its width, in s, ms or µs
// by the larger magnitude of its ends (timeline.h's title).
std::string window_text(Span window);

// One job's phases inside the window.
struct JobPhases {
  const JobRecord* job;
  std::vector<Phase> phases;  // clipped, in order, none empty
};

// The jobs with a phase inside the window, by worker, then assigned time (stable), each with its
// clipped phases.
std::vector<JobPhases> phases_in_window(const std::vector<JobRecord>& jobs, Span window);

// The Chrome trace of `jobs` (timeline.h): the file's text.
std::string chrome_trace(const std::vector<JobPhases>& jobs, int workers, Span window,
                         const std::string& title, const std::string& jobs_csv);

}  // namespace pacer::timeline

#endif  // PACER_SRC_EXPERIMENT_TIMELINE_PHASES_H_
