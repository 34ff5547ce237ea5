// Files that are never half-written.
//
// Everything pacer writes for the user (logs, summaries, tables, resolved configs) goes through
// write_file_atomic, AtomicFile or AppendFile. The first two write "<path>.tmp.<pid>" and rename
// it over <path> only when it is complete, so a crash, an error or Ctrl-C leaves either the old
// file or the new one, never a truncated mix; a temporary file a killed process left behind is
// removed by remove_stale_temp_files (RunFolder calls it when a run starts in a folder). An
// AppendFile (log.csv) grows only by whole pieces: a failed write is cut back off.
//
// Every failure to write (a full disk included) is an Error naming the file.
//
// Test hooks. Crash points (core/crash_point.h) at every replacement: "outputs.temp_written"
// (the temporary file is complete, not yet renamed) and "outputs.replaced" (just renamed into
// place). PACER_TEST_FAIL_WRITE_AT="NAME" or "NAME:k" makes the k-th write (default the first) to
// a file whose name, the last component of its path, is NAME fail as a full disk does (ENOSPC),
// wherever it is written: write_file_atomic, AtomicFile::commit, write_file, AppendFile::flush
// (one write each), and the check of gnuplot's drawings (injected_write_failure). Without the
// variable the check costs one branch.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace pacer {

// Writes `content` to `path` atomically. Throws Error naming the path on failure.
void write_file_atomic(const std::string& path, std::string_view content);

// Writes `content` to `path` in place (created or truncated): for files nobody sees under their
// final name until they are complete (a staging folder's). Throws Error naming the path.
void write_file(const std::string& path, std::string_view content);

// Reads a whole file; throws Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

// Creates `dir` and its parents if needed; throws Error naming it on failure.
void make_directories(const std::string& dir);

// Removes, in `dir` and the folders below it, the temporary files "<name>.tmp.<pid>" whose
// process is no longer running (or is this one: the caller has no write in flight there). A pid
// is checked on this host only. Missing `dir`: nothing to do.
void remove_stale_temp_files(const std::string& dir);

// Whether process `pid` exists on this host (kill(pid, 0)).
bool process_alive(long pid);

// PACER_TEST_FAIL_WRITE_AT (see the file comment): counts this write of `path` and returns true
// when it is the one to fail.
bool injected_write_failure(std::string_view path);

// A file written incrementally that appears under its final name only on commit(). Destroying it
// without commit() removes the temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  // Flushes, closes and renames into place. Throws Error on an I/O failure.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

// A file that grows at its end in whole pieces (log.csv): append() collects bytes in memory,
// flush() writes them with one write(2) each time. A flush that fails (ENOSPC, EIO, ...) cuts the
// file back to its length before the flush, so the file never ends in a part of a piece, keeps
// the bytes collected, and throws an Error naming the file. Bytes flushed are in the kernel (they
// survive the process, not a power loss: sync() for that). Lengths count the collected bytes too.
class AppendFile {
 public:
  AppendFile() = default;
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Opens the existing file `path` to append at its end (closing any file open before). Throws
  // Error naming it when it cannot be opened.
  void open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void close();

  // Collects `bytes` (no I/O).
  void append(std::string_view bytes) { pending_.append(bytes); }
  // Writes what was collected; returns the file's length. Throws Error (see the class comment).
  uint64_t flush();
  // flush(), then fdatasync. Throws Error naming the file.
  void sync();
  // The file's length with the collected bytes.
  uint64_t size() const { return flushed_ + pending_.size(); }
  // The length written to the file (without the collected bytes).
  uint64_t flushed() const { return flushed_; }
  uint64_t pending() const { return pending_.size(); }
  // Cuts the file (with the collected bytes) to `length` <= size() bytes; what is appended later
  // follows them. Throws Error naming the file when the file cannot be cut.
  void truncate(uint64_t length);

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t flushed_ = 0;
  std::string pending_;
};

}  // namespace pacer
