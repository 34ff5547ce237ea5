// Named, seeded random streams.
//
// Every random choice in pacer draws from an Rng constructed from (seed, purpose, index), e.g.
// Rng(seed, "duration", worker). Streams with different purposes or indices are independent, and
// a stream's sequence depends on nothing else: worker 3's compute times are the same whichever
// method runs, because no other consumer draws from that stream.
//
// The generator is xoshiro256** seeded through SplitMix64, and every distribution below is
// implemented here (not with <random>'s distributions, whose output differs between standard
// libraries), so a seed gives the same numbers on every platform.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer {

class StateArchive;

class Rng {
 public:
  Rng(uint64_t seed, std::string_view purpose, uint64_t index = 0);

  uint64_t next_u64();
  // Uniform on [0, 1), 53 random bits.
  double uniform();
  // Uniform integer on [0, n). Requires n > 0. Unbiased (rejection sampling).
  uint64_t uniform_int(uint64_t n);
  // Exponential with the given mean (mean >= 0; mean 0 gives 0).
  double exponential(double mean);
  // Standard normal (Box-Muller; caches the second value).
  double normal();
  // Pareto with scale 1 and shape alpha > 0: P(X > x) = x^-alpha for x >= 1.
  double pareto(double alpha);
  // Gamma(shape, 1) for shape > 0 (Marsaglia-Tsang).
  double gamma(double shape);

  // The stream's position (the generator's state and a cached normal), for checkpoints.
  void checkpoint(StateArchive& a);

  // Fisher-Yates shuffle of v.
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[uniform_int(i)]);
    }
  }

 private:
  uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// Stable 64-bit hash of a string (FNV-1a), used to derive stream seeds from purposes.
uint64_t stable_hash(std::string_view text);

}  // namespace pacer
