// NumPy's .npy arrays and .npz archives, for load_numpy and load_data. Not a public header.
//
// Format (numpy.lib.format): "\x93NUMPY", a major and minor version byte (1.0, 2.0 or 3.0), the
// header's length (2 bytes little-endian in 1.0, 4 bytes after), then the header, a Python dict
// literal {'descr': '<f8', 'fortran_order': False, 'shape': (120, 4), } padded with spaces and
// a newline, and the elements in C order. An .npz archive is a zip file of .npy files, one per
// array, named "<array>.npy"; np.savez stores them, np.savez_compressed deflates them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "internal.h"
#include "pacer/core/memory.h"

namespace pacer::data_internal {

// An element type pacer reads: NumPy's defaults (float64, int64, bool) and the other integer and
// floating types NumPy writes, of either byte order.
struct NpyType {
  char kind = 'f';  // 'f' floating, 'i' signed integer, 'u' unsigned integer, 'b' bool
  int bytes = 8;    // 1, 2, 4 or 8 (floating: 4 or 8; bool: 1)
  bool big_endian = false;
  std::string descr;  // as the header writes it, "<f8"
};

// An array in C order. `data` is count() * type.bytes bytes in memory that `owner` keeps alive
// (a memory map of the file, or a buffer holding a decompressed file).
struct NpyArray {
  std::string name;  // how errors start: "data.train: X.npy", "data.train: d.npz, array X"
  std::string file;  // how other arrays' errors name it: "X.npy", "array X of d.npz"
  NpyType type;
  std::vector<uint64_t> shape;
  std::string_view data;
  std::shared_ptr<const void> owner;

  // The product of the shape (1 for a 0-d array).
  uint64_t count() const;
  // The shape as Python prints it: "(120, 4)", "(120,)", "()".
  std::string shape_text() const;
  // Converts the elements [first, first + n) to doubles at `out`.
  void to_doubles(uint64_t first, uint64_t n, double* out) const;
};

// Parses an .npy file whose bytes are `bytes` (kept alive by `owner`). Every mistake (magic,
// version, header syntax, an unsupported dtype, Fortran order, a size that disagrees with the
// shape) is an Error starting with `name`.
NpyArray parse_npy(std::string_view bytes, std::shared_ptr<const void> owner,
                   const std::string& name, const std::string& file);

// True when `path` starts as a zip archive does (an .npz), detected from the content.
bool is_zip(const std::string& path);

// An .npy file: memory-mapped when plain, read through zlib when gzip-compressed (the whole
// decompressed file is then held; it is refused above `limit` before it is kept).
NpyArray read_npy(const std::string& path, const std::string& name, const MemoryLimit& limit);

// The arrays `wanted` of an .npz archive, by name ("X" for the entry "X.npy"). A stored entry is
// a view into a memory map of the archive; a deflated one is inflated into a buffer (refused
// above `limit` before it is allocated) and its CRC-32 checked. An archive lacking one of them is
// an Error listing the arrays it holds.
std::map<std::string, NpyArray> read_npz(const std::string& path, const std::string& name,
                                         const std::vector<std::string>& wanted,
                                         const MemoryLimit& limit);

// One data set's files: features and labels in two .npy files, or both in one .npz (arrays X and
// y) when labels_path is empty. The keys name the files in errors ("data.train: X.npy ..."); empty
// outside a config.
struct NumpyFiles {
  std::string path, labels_path;
  std::string key, labels_key;
};
// Reads a data set's features (shape (rows, features), or (rows, d1, d2, ...) flattened in C
// order) and labels (shape (rows,)); every value must be finite. Refuses, before allocating
// them, features above `limit` as doubles.
RawTable read_numpy(const NumpyFiles& files, const MemoryLimit& limit);

// The whole content of `path`, memory-mapped read-only (an empty view for an empty file); the
// shared pointer owns the mapping. An Error naming the file when it cannot be opened or mapped.
std::pair<std::string_view, std::shared_ptr<const void>> map_file(const std::string& path);

}  // namespace pacer::data_internal
