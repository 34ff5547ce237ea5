#include "pacer/core/rng.h"

#include <cmath>

#include "pacer/core/error.h"
#include "pacer/core/state.h"

namespace pacer {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t stable_hash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(uint64_t seed, std::string_view purpose, uint64_t index) {
  uint64_t state = seed;
  uint64_t mix = splitmix64(state) ^ stable_hash(purpose);
  state = mix;
  mix = splitmix64(state) ^ (index * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
  state = mix;
  for (uint64_t& word : s_) word = splitmix64(state);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

uint64_t Rng::uniform_int(uint64_t n) {
  PACER_CHECK(n > 0);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do {
    r = next_u64();
  } while (r >= limit);
  return r % n;
}

double Rng::exponential(double mean) {
  PACER_CHECK(mean >= 0);
  // 1 - uniform() lies in (0, 1], so the logarithm is finite.
  return -mean * std::log(1.0 - uniform());
}

double Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  spare_normal_ = radius * std::sin(angle);
  has_spare_normal_ = true;
  return radius * std::cos(angle);
}

double Rng::pareto(double alpha) {
  PACER_CHECK(alpha > 0);
  return std::pow(1.0 - uniform(), -1.0 / alpha);
}

double Rng::gamma(double shape) {
  PACER_CHECK(shape > 0);
  if (shape < 1.0) {
    // Boost: Gamma(a) = Gamma(a + 1) * U^(1/a).
    const double u = 1.0 - uniform();
    return gamma(shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

void Rng::checkpoint(StateArchive& a) {
  for (uint64_t& word : s_) a.io(word);
  a.io(has_spare_normal_);
  a.io(spare_normal_);
}

}  // namespace pacer
