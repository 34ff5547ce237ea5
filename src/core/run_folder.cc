#include "pacer/core/run_folder.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "pacer/core/crash_point.h"
#include "pacer/core/error.h"
#include "pacer/core/files.h"
#include "pacer/core/log.h"

namespace pacer {
namespace {

namespace fs = std::filesystem;

// `dir` as an absolute path without a trailing separator, its last component resolved when it is
// a symbolic link (the folder it points to is the one replaced).
fs::path resolve(const std::string& dir) {
  if (dir.empty()) fail("output folder: an empty path");
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  std::error_code ec;
  if (fs::is_symlink(p, ec)) {
    fs::path target = fs::canonical(p, ec);
    if (ec) fail("{}: a symbolic link to nothing usable: {}", dir, ec.message());
    p = target;
  }
  if (p == p.root_path()) fail("{}: cannot use the root folder as a run's output folder", dir);
  return p;
}

std::string sibling(const fs::path& real, const char* kind, long pid) {
  return real.string() + ".pacer-" + kind + "." + std::to_string(pid);
}

// The pid of a sibling named "<real>.pacer-<kind>.<pid>", or 0 when `name` is not one.
long sibling_pid(const std::string& name, const std::string& base, const std::string& kind) {
  const std::string prefix = base + ".pacer-" + kind + ".";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
  return *end == '\0' ? pid : 0;
}

bool stale(long pid) {
  return pid > 0 && (pid == static_cast<long>(::getpid()) || !process_alive(pid));
}

void remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) log_warning("{}: could not remove it: {}", path.string(), ec.message());
}

// Removes the staging and old folders killed runs left beside `real`; renames an earlier run
// back when a crash between the fallback's two renames left `real` missing.
void recover_siblings(const fs::path& real) {
  const std::string base = real.filename().string();
  std::vector<fs::path> staged, old;  // collected first: the loop below changes the folder
  std::error_code ec;
  for (auto it = fs::directory_iterator(real.parent_path(), ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (stale(sibling_pid(name, base, "new"))) staged.push_back(it->path());
    if (stale(sibling_pid(name, base, "old"))) old.push_back(it->path());
  }
  for (const fs::path& path : staged) remove_tree(path);
  for (const fs::path& path : old) {
    std::error_code missing;
    if (!fs::exists(real, missing) && std::rename(path.c_str(), real.c_str()) == 0) {
      log_warning("{}: restored the earlier run that a killed run had moved to {}", real.string(),
                  path.string());
    } else {
      remove_tree(path);
    }
  }
}

// Refuses to replace anything but an empty folder or a pacer run's (see the header).
void check_replaceable(const std::string& dir, const fs::path& real) {
  std::error_code ec;
  if (!fs::exists(real, ec)) return;
  if (!fs::is_directory(real, ec)) fail("{}: exists and is not a folder", dir);
  remove_stale_temp_files(real.string());
  if (fs::is_empty(real, ec) || fs::exists(real / "summary.json", ec)) return;
  fail(
      "{}: exists and is not a pacer run's folder (it holds no summary.json); a run replaces its "
      "output folder as a whole, so choose another --out, or empty or remove this one",
      dir);
}

// Writes `files` into a new staging folder; on failure removes it and throws an Error saying
// that `dir` was left as it was.
void stage(const std::string& dir, const std::string& staging, const RunFolder::Files& files) {
  remove_tree(staging);  // a stale one of this pid
  try {
    std::error_code ec;
    fs::create_directory(staging, ec);
    if (ec) fail("{}: cannot create this staging folder: {}", staging, ec.message());
    for (const auto& [name, content] : files) {
      const fs::path path = fs::path(staging) / name;
      if (path.has_parent_path()) make_directories(path.parent_path().string());
      write_file(path.string(), content);
    }
  } catch (const Error& e) {
    remove_tree(staging);
    fail("{}: the new run's first files could not be written, so the folder is as it was: {}", dir,
         e.what());
  }
}

// renameat2(RENAME_EXCHANGE): 0, or the errno of the failure.
int exchange_names(const std::string& a, const std::string& b) {
  const char* no_exchange = std::getenv("PACER_TEST_NO_EXCHANGE");
  if (no_exchange && std::strcmp(no_exchange, "1") == 0) return EINVAL;
#ifdef SYS_renameat2
  if (::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) {
    return 0;
  }
  return errno;
#else
  return ENOSYS;
#endif
}

[[noreturn]] void fail_swap(const std::string& dir, const std::string& staging, int error) {
  remove_tree(staging);
  fail("{}: cannot put the new run in place: {} (the earlier run is kept)", dir,
       std::strerror(error));
}

// The two-rename swap for filesystems without RENAME_EXCHANGE (see the header).
void swap_by_renames(const std::string& dir, const fs::path& real, const std::string& staging,
                     const std::string& old) {
  if (std::rename(real.c_str(), old.c_str()) != 0) fail_swap(dir, staging, errno);
  crash_point("outputs.aside");
  if (std::rename(staging.c_str(), real.c_str()) != 0) {
    const int error = errno;
    std::rename(old.c_str(), real.c_str());
    fail_swap(dir, staging, error);
  }
  crash_point("outputs.swapped");
  remove_tree(old);
}

// Puts the complete staging folder in the place of `real` (see the header).
void swap_in(const std::string& dir, const fs::path& real, const std::string& staging) {
  const std::string old = sibling(real, "old", static_cast<long>(::getpid()));
  std::error_code ec;
  if (!fs::exists(real, ec)) {
    if (std::rename(staging.c_str(), real.c_str()) != 0) fail_swap(dir, staging, errno);
    crash_point("outputs.swapped");
    return;
  }
  const int error = exchange_names(staging, real.string());
  if (error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
    swap_by_renames(dir, real, staging, old);
    return;
  }
  if (error != 0) fail_swap(dir, staging, error);
  crash_point("outputs.swapped");
  // The staging name now holds the earlier run.
  if (std::rename(staging.c_str(), old.c_str()) == 0) {
    remove_tree(old);
  } else {
    remove_tree(staging);
  }
}

}  // namespace

RunFolder RunFolder::create(const std::string& dir, const Files& first_files) {
  const fs::path real = resolve(dir);
  make_directories(real.parent_path().string());
  recover_siblings(real);
  check_replaceable(dir, real);
  const std::string staging = sibling(real, "new", static_cast<long>(::getpid()));
  stage(dir, staging, first_files);
  crash_point("outputs.staged");
  swap_in(dir, real, staging);
  return RunFolder(real.string());
}

RunFolder RunFolder::reopen(const std::string& dir) {
  const fs::path real = resolve(dir);
  std::error_code ec;
  if (fs::is_directory(real.parent_path(), ec)) recover_siblings(real);
  if (!fs::is_directory(real, ec)) fail("{}: no run folder to continue (not a folder)", dir);
  remove_stale_temp_files(real.string());
  return RunFolder(real.string());
}

void RunFolder::write(std::string_view name, std::string_view content) const {
  const fs::path path = fs::path(dir_) / name;
  make_directories(path.parent_path().string());
  write_file_atomic(path.string(), content);
}

void RunFolder::remove(std::string_view name) const {
  std::error_code ec;
  const std::string file = path(name);
  fs::remove(file, ec);
  if (ec) fail("{}: cannot remove it: {}", file, ec.message());
}

}  // namespace pacer
