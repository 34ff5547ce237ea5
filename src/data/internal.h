// Pieces shared by the loaders, describe_data_file and load_data. Not a public header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pacer/core/memory.h"
#include "pacer/data/dataset.h"

struct gzFile_s;  // zlib's file handle

namespace pacer::data_internal {

// A file read through zlib, so gzip-compressed and plain files read the same. Every failure
// (missing file, corrupt gzip stream) is an Error naming the path.
class GzFile {
 public:
  explicit GzFile(const std::string& path);
  ~GzFile();
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to `size` bytes into `out`; fewer only at the end of the data.
  size_t read(void* out, size_t size);
  // Reads up to `size` bytes; the buffer grows with the data actually present, so a header that
  // promises an absurd size cannot make this allocate more than the file holds.
  std::string read_up_to(uint64_t size);
  // Everything that is left.
  std::string read_rest();
  // True when the content was gzip-compressed.
  bool compressed();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  gzFile_s* file_ = nullptr;
};

// IDX files (loaders.h). The payload is checked against the header before anything is returned;
// read_idx_images refuses a header whose images (bytes, and the doubles load_idx makes of them)
// would exceed `limit`, before reading them.
struct IdxImages {
  int count = 0;
  int height = 0;
  int width = 0;
  std::string pixels;  // count * height * width bytes
  bool compressed = false;
};
struct IdxLabels {
  std::string labels;  // one byte per sample
  bool compressed = false;
};
// The magic number (first 4 bytes) of a file, 0 when it is shorter.
uint32_t idx_magic(const std::string& path);
inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;
IdxImages read_idx_images(const std::string& path,
                          const MemoryLimit& limit = MemoryLimit::system_default());
IdxLabels read_idx_labels(const std::string& path);

inline constexpr int kCifarRecordBytes = 1 + 3 * 32 * 32;

// A text table as written in the file: dense features and the label values before mapping.
struct RawTable {
  RowMatrix features;
  std::vector<double> labels;
};
// Both refuse, before allocating it, a table whose dense matrix (and, for CSV, the values parsed
// into it) would exceed `limit`, and a plain file larger than the limit before reading it.
RawTable read_libsvm(const std::string& path, int num_features,
                     const MemoryLimit& limit = MemoryLimit::system_default());
RawTable read_csv(const std::string& path, int label_column,
                  const MemoryLimit& limit = MemoryLimit::system_default());
// Refuses (before it is read) a plain, uncompressed file larger than `limit`: reading a text
// table holds at least its whole text. A gzip file's size is known only once it is read.
void check_text_size(const std::string& path, const MemoryLimit& limit);

// Calls `visit(line, line_number)` for every line of `text` (1-based numbers) that is not empty,
// all whitespace, or a comment starting with '#'. Strips a trailing '\r'.
void for_each_line(std::string_view text, const std::function<void(std::string_view, int)>& visit);
// Parses a whole token as a finite double (a leading '+' is accepted). False otherwise.
bool parse_number(std::string_view token, double& value);
// Removes leading and trailing spaces and tabs.
std::string_view trim(std::string_view text);

// The mapping from label values to classes shared by the text loaders: when every label in every
// set is an integer, class k is the k-th smallest distinct value; otherwise the data is a
// regression set and labels pass through unchanged. Fitting on train and test together keeps
// the two sets' class indices consistent when one of them lacks a class.
class LabelCoding {
 public:
  static LabelCoding fit(const std::vector<const std::vector<double>*>& label_sets);
  bool classification() const { return classification_; }
  int num_classes() const { return static_cast<int>(values_.size()); }
  const std::vector<double>& values() const { return values_; }
  Vec apply(const std::vector<double>& labels) const;

 private:
  bool classification_ = false;
  std::vector<double> values_;  // distinct labels, increasing (classification only)
};

// Builds a Dataset from a raw table with the given label coding.
Dataset to_dataset(RawTable raw, const LabelCoding& coding, const std::string& name);

}  // namespace pacer::data_internal
