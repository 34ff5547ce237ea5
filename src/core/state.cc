#include "pacer/core/state.h"

#include <algorithm>

#include "pacer/core/error.h"

namespace pacer {

void refuse_checkpoint(std::string_view component) {
  fail("{} cannot be checkpointed: leave checkpoint.every_s and checkpoint.every_steps unset",
       component);
}

void StateArchive::mismatch(std::string_view what) const {
  fail("{}: the checkpoint's state does not fit this run at byte {} (in section '{}'): {}", source_,
       position_, last_section_, what);
}

void StateArchive::need(uint64_t bytes) const {
  if (bytes > bytes_.size() - position_) {
    mismatch(fmt::format("{} more bytes expected, {} left", bytes, bytes_.size() - position_));
  }
}

void StateArchive::check_count(uint64_t count, uint64_t min_bytes) const {
  if (count > (bytes_.size() - position_) / std::max<uint64_t>(min_bytes, 1)) {
    mismatch(fmt::format("a count of {} elements exceeds the {} bytes left", count,
                         bytes_.size() - position_));
  }
}

void StateArchive::expect_end() const {
  if (loading_ && position_ != bytes_.size()) {
    mismatch(fmt::format("{} bytes left over after the last component", bytes_.size() - position_));
  }
}

void StateArchive::section(std::string_view name) {
  std::string saved(name);
  io(saved);
  if (loading_ && saved != name) {
    mismatch(fmt::format("expected the state of '{}', found '{}'", name, saved));
  }
  last_section_ = std::string(name);
}

void StateArchive::io(bool& v) {
  uint8_t byte = v ? 1 : 0;
  raw(byte);
  if (loading_ && byte > 1) mismatch(fmt::format("a flag of value {}", byte));
  v = byte == 1;
}

void StateArchive::io(std::string& v) {
  uint64_t n = v.size();
  io(n);
  if (loading_) {
    need(n);
    v.assign(bytes_.data() + position_, n);
    position_ += n;
  } else {
    bytes_.append(v);
  }
}

void StateArchive::io(Vec& v) {
  int64_t n = v.size();
  io(n);
  if (loading_) {
    if (n < 0) mismatch("a negative vector length");
    check_count(static_cast<uint64_t>(n), sizeof(double));
    v.resize(n);
    std::memcpy(v.data(), bytes_.data() + position_, sizeof(double) * n);
    position_ += sizeof(double) * n;
  } else {
    bytes_.append(reinterpret_cast<const char*>(v.data()), sizeof(double) * n);
  }
}

void StateArchive::io(std::vector<bool>& v) {
  uint64_t n = v.size();
  io(n);
  if (loading_) {
    check_count(n, 1);
    v.resize(n);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    bool b = v[i];
    io(b);
    v[i] = b;
  }
}

void StateArchive::expect(int64_t value, std::string_view what) {
  int64_t saved = value;
  io(saved);
  if (loading_ && saved != value) {
    mismatch(fmt::format("{} was {} when saved, {} now", what, saved, value));
  }
}

}  // namespace pacer
