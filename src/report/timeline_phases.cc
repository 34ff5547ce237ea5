#include "timeline_phases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace pacer {
namespace timeline {

std::vector<Phase> job_phases(const JobRecord& job) {
  std::vector<Phase> out;
  double at = job.assigned;
  // The next phase, from where the last one ended to `to` (at least there).
  auto next = [&](PhaseKind kind, double to) {
    to = std::max(at, to);
    if (to > at) out.push_back({kind, {at, to}});
    at = to;
  };
  if (!job.started || !job.finished) {
    next(kOut, job.end());
    return out;
  }
  if (job.sent) {
    next(kHeld, *job.sent);
    next(kTransfer, *job.started);
  } else {
    next(kTransferOrWait, *job.started);
  }
  const double injected = std::max(0.0, job.injected_time.value_or(0));
  next(kCompute, std::max(*job.started, *job.finished - injected));
  next(kInjected, *job.finished);
  if (job.delivered) next(kReply, *job.delivered);
  return out;
}

std::optional<Span> clip(Span span, Span window) {
  const double lo = std::max(span.from, window.from), hi = std::min(span.to, window.to);
  if (!(lo < hi)) return std::nullopt;
  return Span{lo, hi};
}

Span choose_window(const std::vector<JobRecord>& jobs, int workers, TimelineWindow asked,
                   size_t& automatic_jobs) {
  automatic_jobs = 0;
  if (!asked.all && asked.to > asked.from) return {asked.from, asked.to};
  if (jobs.empty()) return {};
  std::vector<double> ends;
  double from = jobs[0].assigned;
  for (const JobRecord& j : jobs) {
    ends.push_back(j.end());
    from = std::min(from, j.assigned);
  }
  std::sort(ends.begin(), ends.end());
  if (asked.all) return {from, ends.back()};
  automatic_jobs = std::min(
      ends.size(), static_cast<size_t>(kTimelineJobsPerWorker) * static_cast<size_t>(workers));
  return {from, ends[automatic_jobs - 1]};
}

std::string window_text(Span w) {
  const double magnitude = std::max(std::abs(w.from), std::abs(w.to));
  const char* unit = "s";
  double scale = 1;
  if (magnitude > 0 && magnitude < 1e-3) {
    unit = "µs";
    scale = 1e6;
  } else if (magnitude > 0 && magnitude < 1) {
    unit = "ms";
    scale = 1e3;
  }
  // Three significant digits of the width: 10 s wide → one decimal, 0.2 s wide → three.
  const double width = (w.to - w.from) * scale;
  const int decimals =
      width > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(width))), 0, 9) : 0;
  return fmt::format("t = {:.{}f}–{:.{}f} {}", w.from * scale, decimals, w.to * scale, decimals,
                     unit);
}

std::vector<JobPhases> phases_in_window(const std::vector<JobRecord>& jobs, Span window) {
  std::vector<JobPhases> out;
  for (const JobRecord& job : jobs) {
    JobPhases in{&job, {}};
    for (const Phase& p : job_phases(job)) {
      if (std::optional<Span> s = clip(p.span, window)) in.phases.push_back({p.kind, *s});
    }
    if (!in.phases.empty()) out.push_back(std::move(in));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobPhases& a, const JobPhases& b) {
    if (a.job->worker != b.job->worker) return a.job->worker < b.job->worker;
    return a.job->assigned < b.job->assigned;
  });
  return out;
}

}  // namespace timeline

TimelineWindow read_timeline_window(const Config& config) {
  const std::vector<double> window = config.get_doubles("record.timeline", {});
  if (window.empty()) return {};
  if (window.size() != 2 || !(window[0] >= 0) || !(window[1] > window[0]) ||
      !std::isfinite(window[1])) {
    config.fail_key("record.timeline", "[from, to] in seconds with 0 <= from < to");
  }
  return TimelineWindow{window[0], window[1]};
}

std::string timeline_window_name(const TimelineWindow& window) {
  if (window.all) return "timeline-all";
  if (!(window.to > window.from)) return "timeline";
  return fmt::format("timeline-{}-{}", window.from, window.to);
}

}  // namespace pacer
