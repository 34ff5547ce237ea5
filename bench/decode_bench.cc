// Decoding cost of the coded schemes next to a plain sum of the same n messages (DESIGN.md
// section 7): n messages of d = 10^6 doubles, s = 2.
//   PlainSum           out = Σ_i m_i over all n (what DGD's master does), the memory-bound floor
//   ExactCached        a_F looked up in the decoder's cache, then ĝ = Σ_{i∈F} (a_i/n) m_i (GC-CR)
//   ExactUncached      a_F solved for the set (a cache miss: least squares up to
//                      kLeastSquaresMaxWorkers = 64 workers, the null-space solve above), then the
//                      sum
//   Relaxed            ĝ = (μ/n) Σ_{i∈F} m_i (PGC-CR)
// Bytes processed = the messages read, so GB/s compares the combine passes directly.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "pacer/coding/decoder.h"
#include "pacer/coding/encoding.h"
#include "pacer/core/rng.h"

namespace pacer {
namespace {

constexpr int64_t kDim = 1000000;
constexpr int kStragglers = 2;

struct Messages {
  explicit Messages(int n) : out(Vec::Zero(kDim)) {
    Rng rng(1, "bench-messages");
    for (int i = 0; i < n; ++i) {
      Vec m(kDim);
      for (int64_t j = 0; j < kDim; ++j) m[j] = rng.uniform();
      messages.push_back(std::move(m));
    }
  }
  const Vec& operator()(int i) const { return messages[i]; }
  std::vector<Vec> messages;
  Vec out;
};

// The messages of n workers, built once per n and shared by every benchmark of that n.
Messages& messages_for(int n) {
  static std::vector<std::unique_ptr<Messages>> cache;
  for (auto& m : cache) {
    if (static_cast<int>(m->messages.size()) == n) return *m;
  }
  cache.push_back(std::make_unique<Messages>(n));
  return *cache.back();
}

// The fastest n − s: every worker but the last s.
std::vector<bool> responder_mask(int n) {
  std::vector<bool> mask(n, true);
  for (int k = 0; k < kStragglers; ++k) mask[n - 1 - k] = false;
  return mask;
}

std::vector<int> members(const std::vector<bool>& mask) {
  std::vector<int> f;
  for (int i = 0; i < static_cast<int>(mask.size()); ++i) {
    if (mask[i]) f.push_back(i);
  }
  return f;
}

RowMatrix encoding_for(int n) {
  // Conditioning does not change the cost; one draw keeps the set-up short at n = 100.
  Placement cr(PlacementKind::kCyclic, n, kStragglers);
  return make_cyclic_encoding(cr, 1, {.trials = 1, .refine_steps = 0, .max_sets = 100}).matrix;
}

void set_bytes(benchmark::State& state, int64_t vectors) {
  state.SetBytesProcessed(state.iterations() * vectors * kDim *
                          static_cast<int64_t>(sizeof(double)));
}

void BM_PlainSum(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Messages& m = messages_for(n);
  for (auto _ : state) {
    m.out = m.messages[0];
    for (int i = 1; i < n; ++i) m.out += m.messages[i];
    benchmark::DoNotOptimize(m.out.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, n);
}

void BM_ExactCached(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Messages& m = messages_for(n);
  ExactDecoder decoder(encoding_for(n), kStragglers);
  const std::vector<bool> mask = responder_mask(n);
  const std::vector<int> f = members(mask);
  std::vector<double> weights(n);
  decoder.decode(mask);  // warm the cache
  for (auto _ : state) {
    const ExactCoefficients& a = decoder.decode(mask);
    for (int i : f) weights[i] = a.a[i] / n;
    weighted_sum(f, weights, m, m.out);
    benchmark::DoNotOptimize(m.out.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, n - kStragglers);
}

void BM_ExactUncached(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Messages& m = messages_for(n);
  ExactDecoder decoder(encoding_for(n), kStragglers);
  const std::vector<bool> mask = responder_mask(n);
  const std::vector<int> f = members(mask);
  std::vector<double> weights(n);
  for (auto _ : state) {
    const ExactCoefficients a = decoder.solve(mask);
    for (int i : f) weights[i] = a.a[i] / n;
    weighted_sum(f, weights, m, m.out);
    benchmark::DoNotOptimize(m.out.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, n - kStragglers);
}

void BM_Relaxed(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Messages& m = messages_for(n);
  const std::vector<int> f = members(responder_mask(n));
  std::vector<double> weights(n);
  for (auto _ : state) {
    const double w = relaxed_mu(n, kStragglers) / n;
    for (int i : f) weights[i] = w;
    weighted_sum(f, weights, m, m.out);
    benchmark::DoNotOptimize(m.out.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, n - kStragglers);
}

// Only the coefficient solve of a cache miss, without the combine pass.
void BM_ExactSolveOnly(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  ExactDecoder decoder(encoding_for(n), kStragglers);
  const std::vector<bool> mask = responder_mask(n);
  for (auto _ : state) benchmark::DoNotOptimize(decoder.solve(mask));
}

BENCHMARK(BM_PlainSum)->Arg(12)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExactCached)->Arg(12)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExactUncached)->Arg(12)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Relaxed)->Arg(12)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExactSolveOnly)->Arg(12)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pacer
