#include "pacer/core/files.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "pacer/core/error.h"

namespace pacer {
namespace {
std::string temp_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}
}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile file(path);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
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
  if (!out_) fail("{}: write failed (disk full?)", temp_path_);
  out_.close();
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    fail("{}: cannot rename {} into place", path_, temp_path_);
  }
  committed_ = true;
}

}  // namespace pacer
