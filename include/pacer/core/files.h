// Files that are never half-written.
//
// Everything pacer writes for the user (logs, summaries, tables, resolved configs) goes through
// AtomicFile or write_file_atomic: the bytes go to "<path>.tmp.<pid>" first and are renamed over
// <path> only on commit(), so a crash, an error or Ctrl-C leaves either the old file or the new
// one, never a truncated mix.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

namespace pacer {

// Writes `content` to `path` atomically. Throws Error naming the path on failure.
void write_file_atomic(const std::string& path, std::string_view content);

// Reads a whole file; throws Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

// Creates `dir` and its parents if needed; throws Error naming it on failure.
void make_directories(const std::string& dir);

// A file written incrementally (e.g. log.csv) that appears under its final name only on
// commit(). Destroying it without commit() removes the temporary file.
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

}  // namespace pacer
