// A run's state in binary, for checkpoints (include/pacer/run/checkpoint.h).
//
// Every stateful component has one function that visits its state both ways,
//     void checkpoint(StateArchive& a) { a.section("sync_master"); a.io(step_); a.io(messages_); }
// and the archive's mode decides the direction: a saving archive copies each field into its
// bytes, a loading one overwrites each field from them. One function for both directions means
// the two can never disagree on order or content. A component restored this way must have been
// built from the same configuration as the one saved (sizes are checked, not assumed): the
// archive refuses a length that does not match an existing fixed-size field, and section() names
// the component whose state was expected, so a checkpoint of another method or build is refused
// with a message saying where it diverged.
//
// Encoding: little-endian fixed-width integers and IEEE doubles as their bit patterns (a run is
// resumed on the machine family that wrote it; the checkpoint's header states the format).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pacer/core/vector.h"

namespace pacer {

class StateArchive;

template <typename T>
concept Checkpointable = requires(T& t, StateArchive& a) {
  t.checkpoint(a);
};

class StateArchive {
 public:
  // An archive that records the fields it visits.
  static StateArchive for_saving() { return StateArchive(false, {}, {}); }
  // An archive that restores fields from `bytes`; `source` names them in errors (the file).
  static StateArchive for_loading(std::string bytes, std::string source) {
    return StateArchive(true, std::move(bytes), std::move(source));
  }

  bool loading() const { return loading_; }
  // Saving: the bytes recorded so far.
  const std::string& bytes() const { return bytes_; }
  // Loading: throws Error unless every byte has been read.
  void expect_end() const;
  // Loading: the bytes not read yet.
  size_t remaining() const { return bytes_.size() - position_; }

  // Marks the start of a component's state. Loading throws Error unless the same name was
  // saved here.
  void section(std::string_view name);

  void io(bool& v);
  void io(int32_t& v) { raw(v); }
  void io(int64_t& v) { raw(v); }
  void io(uint64_t& v) { raw(v); }
  void io(double& v) { raw(v); }
  void io(std::string& v);
  // A vector whose size is the component's own business (loading resizes it).
  void io(Vec& v);
  void io(std::vector<bool>& v);

  template <typename T>
  void io(std::vector<T>& v) {
    uint64_t n = v.size();
    io(n);
    if (loading_) {
      // Each element takes at least its own size (arithmetic) or one byte (an empty optional).
      check_count(n, std::is_arithmetic_v<T> ? sizeof(T) : 1);
      v.resize(n);
    }
    if constexpr (std::is_arithmetic_v<T>) {
      for (T& e : v) raw(e);
    } else {
      for (T& e : v) io(e);
    }
  }
  template <typename K, typename V>
  void io(std::map<K, V>& m) {
    uint64_t n = m.size();
    io(n);
    if (!loading_) {
      for (auto& [key, value] : m) {
        K k = key;
        io(k);
        io(value);
      }
      return;
    }
    check_count(n, 2);
    m.clear();
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      V value{};
      io(k);
      io(value);
      m.emplace(std::move(k), std::move(value));
    }
  }
  template <typename T>
  void io(std::optional<T>& v) {
    bool present = v.has_value();
    io(present);
    if (loading_ && present && !v) v.emplace();
    if (loading_ && !present) v.reset();
    if (present) io(*v);
  }
  template <typename A, typename B>
  void io(std::pair<A, B>& p) {
    io(p.first);
    io(p.second);
  }
  // A component with its own checkpoint(StateArchive&).
  template <Checkpointable T>
  void io(T& v) {
    v.checkpoint(*this);
  }
  // A value that must not change across the checkpoint (a size fixed by the configuration):
  // saving records it, loading throws Error naming `what` unless the saved value equals it.
  void expect(int64_t value, std::string_view what);

  // Throws Error naming the source and the position: the saved state does not fit.
  [[noreturn]] void mismatch(std::string_view what) const;

 private:
  StateArchive(bool loading, std::string bytes, std::string source)
      : loading_(loading), bytes_(std::move(bytes)), source_(std::move(source)) {}

  template <typename T>
  void raw(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    static_assert(std::endian::native == std::endian::little);
    if (loading_) {
      need(sizeof(T));
      std::memcpy(&v, bytes_.data() + position_, sizeof(T));
      position_ += sizeof(T);
    } else {
      bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
  }
  // Loading: throws unless `bytes` more bytes are left.
  void need(uint64_t bytes) const;
  // Loading: refuses a count whose elements (at least `min_bytes` each) cannot be in what is left.
  void check_count(uint64_t count, uint64_t min_bytes) const;

  bool loading_;
  std::string bytes_;
  std::string source_;
  size_t position_ = 0;
  std::string last_section_ = "(start)";
};

// Throws Error: `component` has no checkpoint support (the defaults of the seam's interfaces).
[[noreturn]] void refuse_checkpoint(std::string_view component);

}  // namespace pacer
