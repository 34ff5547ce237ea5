// The GC-CR encoding and exact decoder at large n (issue #15, "A thousand workers"): what
// make_cyclic_encoding builds and what it costs, and what one new responder set costs the
// decoder, for n = 12, 100, 1000.
//   BM_CyclicEncoding/n/s   make_cyclic_encoding with the defaults (the random search up to
//                           kSearchMaxWorkers = 32 workers, a circulant above). Counters:
//                           worst_max_abs (over `sets` responder sets; exhaustive = 1 when that
//                           covers all C(n, s) of them), circulant (1 or 0).
//   BM_SingleDraw/n/s       one random Tandon matrix (trials = 1, refine_steps = 0), what the
//                           search starts from: its worst_max_abs shows why it stops at n = 32.
//   BM_BruteForce/n         the circulant's worst max|a| over every one of the C(n, 2) sets
//                           (s = 2), one null-space solve each: checks the figure above, which
//                           comes from one set per multiset of residues mod q.
//   BM_DecodeNewSet/n       ExactDecoder::solve on a responder set it has not seen (s = 2): the
//                           per-step decode cost (least squares up to kLeastSquaresMaxWorkers =
//                           64 workers, the null-space solve above).
// Run with
//   build/bench/encoding_scale_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pacer/coding/decoder.h"
#include "pacer/coding/encoding.h"

namespace pacer {
namespace {

void report(benchmark::State& state, const CyclicEncoding& e) {
  state.counters["worst_max_abs"] = e.quality.worst_max_abs;
  state.counters["sets"] = static_cast<double>(e.quality.sets);
  state.counters["exhaustive"] = e.quality.exhaustive ? 1 : 0;
  state.counters["circulant"] = e.construction == CyclicConstruction::kCirculant ? 1 : 0;
}

void BM_CyclicEncoding(benchmark::State& state) {
  Placement cr(PlacementKind::kCyclic, static_cast<int>(state.range(0)),
               static_cast<int>(state.range(1)));
  CyclicEncoding e;
  for (auto _ : state) e = make_cyclic_encoding(cr, 1);
  report(state, e);
}

void BM_SingleDraw(benchmark::State& state) {
  Placement cr(PlacementKind::kCyclic, static_cast<int>(state.range(0)),
               static_cast<int>(state.range(1)));
  CyclicEncoding e;
  for (auto _ : state) {
    e = make_cyclic_encoding(
        cr, 1, {.trials = 1, .refine_steps = 0, .construction = CyclicConstruction::kSearch});
  }
  report(state, e);
}

void BM_BruteForce(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Placement cr(PlacementKind::kCyclic, n, 2);
  const CyclicEncoding e = make_cyclic_encoding(cr, 1);
  const NullSpaceSolver solver(e.matrix, *e.space, NullSpaceSolver::Rule::kMinimumNorm);
  double worst = 0;
  double residual = 0;
  Eigen::VectorXd a;
  for (auto _ : state) {
    for_each_responder_set(n, 2, [&](const std::vector<bool>& f) {
      const auto [max_abs, r] = solver.solve(f, a);
      worst = std::max(worst, max_abs);
      residual = std::max(residual, r);
    });
  }
  state.counters["worst_max_abs"] = worst;
  state.counters["stated_max_abs"] = e.quality.worst_max_abs;
  state.counters["worst_residual"] = residual;
  state.counters["sets"] = static_cast<double>(count_responder_sets(n, 2));
}

void BM_DecodeNewSet(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Placement cr(PlacementKind::kCyclic, n, 2);
  const CyclicEncoding e = make_cyclic_encoding(cr, 1);
  const ExactDecoder decoder(e.matrix, 2, kExactDecodeTolerance, e.space);
  std::vector<bool> mask(n, true);
  int64_t k = 0;
  for (auto _ : state) {
    const int first = static_cast<int>(k % n);
    const int second = static_cast<int>((k / n + first + 1) % n);
    mask[first] = mask[second] = false;
    benchmark::DoNotOptimize(decoder.solve(mask));
    mask[first] = mask[second] = true;
    ++k;
  }
}

BENCHMARK(BM_CyclicEncoding)
    ->ArgsProduct({{12, 100, 1000}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_SingleDraw)
    ->ArgsProduct({{12, 32, 100}, {2}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_BruteForce)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_DecodeNewSet)->Arg(12)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pacer
