#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "internal.h"
#include "pacer/core/error.h"

namespace pacer::data_internal {

GzFile::GzFile(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a directory, expected a file", path);
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) fail("{}: cannot open file: {}", path, std::strerror(errno));
  // A larger input buffer than zlib's 8 KiB default: fewer system calls on 50 MB files.
  gzbuffer(file_, 1 << 18);
}

GzFile::~GzFile() {
  if (file_ != nullptr) gzclose(file_);
}

size_t GzFile::read(void* out, size_t size) {
  constexpr size_t kMaxChunk = size_t{1} << 30;  // gzread takes an unsigned int
  char* dest = static_cast<char*>(out);
  size_t done = 0;
  while (done < size) {
    const auto chunk = static_cast<unsigned>(std::min(size - done, kMaxChunk));
    const int got = gzread(file_, dest + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code == Z_ERRNO) fail("{}: read error: {}", path_, std::strerror(errno));
      fail("{}: corrupt gzip data: {}", path_, message);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  if (done < size) {
    // zlib reports a gzip stream cut short as a quiet end of data plus Z_BUF_ERROR.
    int code = 0;
    gzerror(file_, &code);
    if (code == Z_BUF_ERROR) {
      fail("{}: truncated gzip stream (compressed data ends early)", path_);
    }
  }
  return done;
}

std::string GzFile::read_up_to(uint64_t size) {
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  std::string out;
  out.reserve(std::min(size, kChunk));
  while (out.size() < size) {
    const size_t old_size = out.size();
    const size_t want = std::min(size - old_size, kChunk);
    out.resize(old_size + want);
    const size_t got = read(out.data() + old_size, want);
    out.resize(old_size + got);
    if (got < want) break;
  }
  return out;
}

std::string GzFile::read_rest() { return read_up_to(std::numeric_limits<uint64_t>::max()); }

bool GzFile::compressed() { return gzdirect(file_) == 0; }

}  // namespace pacer::data_internal
