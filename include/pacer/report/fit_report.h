// What `pacer fit TRACE` prints and writes: the timing models fitted to a measured trace
// (timing/fit.h), ranked, with the [timing] table to paste into a config and a figure of the
// measured against the fitted distributions.
#pragma once

#include <string>

#include "pacer/timing/fit.h"

namespace pacer {

// The text pacer fit prints: one line on the trace, the persistence verdict, the slow workers
// (timing/stragglers.h: chronic and one-off, with how much slower, the workers slower throughout,
// the workers persistent_stragglers gives a slow state), co-occurrence, the block length, the
// ranking of the chosen τ scope (one line per family: rank, k, AIC, ΔAIC to the best, KS,
// parameters or why it does not fit), and the [timing] table of the best fit. Pure.
std::string fit_summary(const DurationTrace& trace, const TraceFit& fit);

// fit.md: the summary's content as Markdown, with the other τ scope's ranking, each worker's own
// best family and the recommended model's KS distance on that worker, the figure and a note on
// the estimators and criteria. `figure` is the PNG's file name relative to the report ("" for
// none). Pure.
std::string fit_markdown(const DurationTrace& trace, const TraceFit& fit,
                         const std::string& figure);

// fit.csv: one row per fit, header
//   scope,worker,model,tau_scope,fits,k,log_likelihood,aic,delta_aic,rank,ks,tau,lambda,alpha,q,
//   delay_mean,note,jitter,shock_probability,shock_share,slowdown,p_slow,p_recover
// scope "pooled" (worker empty; tau_scope "shared" or "per_worker") or "worker" (worker = its
// index; tau_scope "shared"). rank (1 = best) and delta_aic are within the rows of one scope,
// worker and tau_scope; both are empty for a fit that does not fit. tau, slowdown, p_slow and
// p_recover are per-worker entries separated by spaces, an unused shape parameter is empty, the
// note is double-quoted. Pure.
std::string fit_csv(const TraceFit& fit);

// Reads the trace, fits it and writes, atomically, into `out_dir` (created if needed):
//   fit.md, fit.csv             as above
//   fit.gp, figures/fit-*.dat   the figure's gnuplot script and its data: the pooled empirical
//                               CDF against every fitting family's CDF of the chosen scope
//                               (left), the same as tails P(X > x) on a log scale (middle), and
//                               per worker (at most 8) the empirical CDF against the best fit's
//   fit.png                     drawn by gnuplot when it is on the PATH; when it is missing or
//                               fails, one warning says so and the rest is written all the same.
// Returns fit_summary followed by a line naming the files. Errors: those of
// read_duration_trace, and an Error naming a file that cannot be written.
std::string run_fit(const std::string& trace_path, const std::string& out_dir);

}  // namespace pacer
