#include "pacer/core/files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <vector>

#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"

namespace pacer {
namespace {

std::string temp_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

// The write PACER_TEST_FAIL_WRITE_AT names: a file name and which write of it.
struct FailurePlan {
  std::string name;  // empty: no failure planned
  long writes_left = 1;
};

FailurePlan read_failure_plan() {
  FailurePlan plan;
  const char* text = std::getenv("PACER_TEST_FAIL_WRITE_AT");
  if (!text || !*text) return plan;
  plan.name = text;
  const size_t colon = plan.name.rfind(':');
  if (colon != std::string::npos) {
    plan.writes_left = std::max(1L, std::strtol(plan.name.c_str() + colon + 1, nullptr, 10));
    plan.name.resize(colon);
  }
  return plan;
}

[[noreturn]] void fail_write(const std::string& path, int error) {
  fail("{}: cannot write: {}{}", path, std::strerror(error),
       error == ENOSPC ? " (the disk is full)" : "");
}

// Writes all of `bytes` to `fd`; returns 0, or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// Writes `content` into a new (or truncated) file at `target`; on failure removes it and throws
// an Error naming `shown` (the file the user knows).
void write_new_file(const std::string& target, const std::string& shown, std::string_view content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail("{}: cannot open {} for writing: {}", shown, target, std::strerror(errno));
  int error = injected_write_failure(shown) ? ENOSPC : write_all(fd, content);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(target.c_str());
    fail_write(shown, error);
  }
}

// Renames the complete temporary file into place, with the crash points around it.
void rename_into_place(const std::string& temp, const std::string& path) {
  crash_point("outputs.temp_written");
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    fail("{}: cannot rename {} into place: {}", path, temp, std::strerror(error));
  }
  crash_point("outputs.replaced");
}

// "<name>.tmp.<digits>": the pid, or 0 when `name` is no temporary file.
long temp_file_pid(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at == 0 || at + 5 == name.size()) return 0;
  const std::string digits = name.substr(at + 5);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return std::strtol(digits.c_str(), nullptr, 10);
}

}  // namespace

bool injected_write_failure(std::string_view path) {
  static FailurePlan plan = read_failure_plan();
  static std::mutex mutex;
  if (plan.name.empty()) return false;
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::lock_guard<std::mutex> lock(mutex);
  if (name != plan.name || plan.writes_left <= 0) return false;
  return --plan.writes_left == 0;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  const std::string temp = temp_name(path);
  write_new_file(temp, path, content);
  rename_into_place(temp, path);
}

void write_file(const std::string& path, std::string_view content) {
  write_new_file(path, path, content);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file for reading", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("{}: cannot create directory: {}", dir, ec.message());
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

void remove_stale_temp_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  const long self = static_cast<long>(::getpid());
  std::vector<fs::path> stale;  // collected first: removing entries while iterating is unsafe
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const long pid = temp_file_pid(it->path().filename().string());
    if (pid == 0 || (pid != self && process_alive(pid))) continue;
    std::error_code kind;
    if (it->is_regular_file(kind)) stale.push_back(it->path());
  }
  for (const fs::path& path : stale) {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temp_path_(temp_name(path_)) {
  out_.open(temp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) fail("{}: cannot open for writing", temp_path_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  const bool stream_failed = !out_;
  const bool injected = !stream_failed && injected_write_failure(path_);
  out_.close();
  if (stream_failed) fail("{}: cannot write {} (disk full?)", path_, temp_path_);
  if (injected) fail_write(path_, ENOSPC);
  rename_into_place(temp_path_, path_);
  committed_ = true;
}

AppendFile::~AppendFile() { close(); }

void AppendFile::open(const std::string& path) {
  close();
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open for appending: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    fail("{}: cannot read its length: {}", path, std::strerror(error));
  }
  path_ = path;
  fd_ = fd;
  flushed_ = static_cast<uint64_t>(st.st_size);
  pending_.clear();
}

void AppendFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

uint64_t AppendFile::flush() {
  if (pending_.empty() || fd_ < 0) return flushed_;
  const int error = injected_write_failure(path_) ? ENOSPC : write_all(fd_, pending_);
  if (error != 0) {
    // A partial write would leave a cut row: take it back (truncating needs no free space).
    if (::ftruncate(fd_, static_cast<off_t>(flushed_)) != 0) {
      fail("{}: cannot write ({}), and cannot cut the partial write off: {}", path_,
           std::strerror(error), std::strerror(errno));
    }
    fail_write(path_, error);
  }
  flushed_ += pending_.size();
  pending_.clear();
  return flushed_;
}

void AppendFile::sync() {
  flush();
  if (fd_ >= 0 && ::fdatasync(fd_) != 0) fail_write(path_, errno);
}

void AppendFile::truncate(uint64_t length) {
  PACER_CHECK(length <= size());
  if (length >= flushed_) {
    pending_.resize(static_cast<size_t>(length - flushed_));
    return;
  }
  pending_.clear();
  if (::ftruncate(fd_, static_cast<off_t>(length)) != 0) {
    fail("{}: cannot cut it to {} bytes: {}", path_, length, std::strerror(errno));
  }
  flushed_ = length;
}

}  // namespace pacer
