// Writers of NumPy .npy files and .npz archives byte for byte as NumPy writes them
// (numpy.lib.format, np.savez, np.savez_compressed), for the data and CLI tests; the suite needs
// no Python.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace pacer::testing {

// The elements' bytes in this machine's byte order (little-endian on every host pacer's CI uses;
// the dtype strings of the tests say '<').
template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// An .npy file of format version `major`.0: the magic, the header dict padded with spaces to a
// multiple of 64 bytes and ended by '\n' (as NumPy pads it), then `data` as given (so a test can
// cut it short).
inline std::string npy_bytes(const std::string& descr, const std::vector<uint64_t>& shape,
                             const std::string& data, bool fortran_order = false, int major = 1) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    shape_text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  shape_text += shape.size() == 1 ? ",)" : ")";
  // A structured dtype's descr is a list, written as is; a plain one is a quoted string.
  const std::string descr_text = descr.front() == '[' ? descr : "'" + descr + "'";
  std::string header = "{'descr': " + descr_text +
                       ", 'fortran_order': " + (fortran_order ? "True" : "False") +
                       ", 'shape': " + shape_text + ", }";
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t preamble = 8 + length_bytes;
  header.append(63 - (preamble + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>(header.size() >> (8 * i));
  return out + header + data;
}

inline std::string little_endian(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>(value >> (8 * i));
  return out;
}

inline std::string raw_deflate(const std::string& data) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// How an archive's entries are written.
struct NpzStyle {
  bool deflate = false;  // np.savez_compressed; else stored, as np.savez
  // ZIP64 sizes in the central directory too (as for entries above 4 GiB); NumPy's writer always
  // puts them in the local headers (force_zip64), with 0xffffffff in the 32-bit fields.
  bool zip64_directory = false;
};

// A zip archive of `entries` (name in the archive, content), laid out as Python's zipfile writes
// it for np.savez: local headers with ZIP64 extra fields, the central directory, its end record.
inline std::string npz_bytes(const std::vector<std::pair<std::string, std::string>>& entries,
                             NpzStyle style = {}) {
  std::string out, directory;
  const auto u16 = [](uint64_t v) { return little_endian(v, 2); };
  const auto u32 = [](uint64_t v) { return little_endian(v, 4); };
  const auto u64 = [](uint64_t v) { return little_endian(v, 8); };
  for (const auto& [name, content] : entries) {
    const std::string stored = style.deflate ? raw_deflate(content) : content;
    const uint64_t crc =
        crc32(0, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size()));
    const uint64_t method = style.deflate ? 8 : 0, offset = out.size();
    const std::string zip64 = u16(1) + u16(16) + u64(content.size()) + u64(stored.size());
    out += u32(0x04034b50) + u16(45) + u16(0) + u16(method) + u16(0) + u16(0x21) + u32(crc) +
           u32(0xffffffff) + u32(0xffffffff) + u16(name.size()) + u16(zip64.size()) + name + zip64 +
           stored;
    const std::string sizes = style.zip64_directory ? u32(0xffffffff) + u32(0xffffffff)
                                                    : u32(stored.size()) + u32(content.size());
    const std::string extra = style.zip64_directory ? zip64 : "";
    directory += u32(0x02014b50) + u16(45) + u16(45) + u16(0) + u16(method) + u16(0) + u16(0x21) +
                 u32(crc) + sizes + u16(name.size()) + u16(extra.size()) + u16(0) + u16(0) +
                 u16(0) + u32(0) + u32(offset) + name + extra;
  }
  const uint64_t directory_offset = out.size();
  return out + directory + u32(0x06054b50) + u16(0) + u16(0) + u16(entries.size()) +
         u16(entries.size()) + u32(directory.size()) + u32(directory_offset) + u16(0);
}

}  // namespace pacer::testing
