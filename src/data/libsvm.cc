// LIBSVM text: "label index:value index:value ...", 1-based increasing indices.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <vector>

#include "internal.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {
namespace data_internal {
namespace {

// Splits on spaces and tabs, calling `visit(token)` for each non-empty token.
template <typename Visit>
void for_each_token(std::string_view line, Visit visit) {
  size_t start = 0;
  while (true) {
    start = line.find_first_not_of(" \t", start);
    if (start == std::string_view::npos) return;
    size_t end = line.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = line.size();
    visit(line.substr(start, end - start));
    start = end;
  }
}

}  // namespace

RawTable read_libsvm(const std::string& path, int num_features, const MemoryLimit& limit) {
  if (num_features < 0) fail("{}: number of features must be >= 0, got {}", path, num_features);
  check_text_size(path, limit);
  const std::string text = GzFile(path).read_rest();

  std::vector<double> labels;
  std::vector<int64_t> row_end;  // entries of row r are [row_end[r-1], row_end[r])
  std::vector<int> indices;
  std::vector<double> values;
  int max_index = 0;
  for_each_line(text, [&](std::string_view line, int line_number) {
    line = line.substr(0, line.find('#'));  // trailing comment
    bool first = true;
    int previous = 0;
    for_each_token(line, [&](std::string_view token) {
      if (first) {
        first = false;
        double label = 0;
        if (!parse_number(token, label)) {
          fail("{}:{}: label '{}' is not a finite number", path, line_number, token);
        }
        labels.push_back(label);
        return;
      }
      const size_t colon = token.find(':');
      if (colon == std::string_view::npos) {
        fail("{}:{}: expected index:value, found '{}'", path, line_number, token);
      }
      const std::string_view index_text = token.substr(0, colon);
      const std::string_view value_text = token.substr(colon + 1);
      int index = 0;
      const char* index_end = index_text.data() + index_text.size();
      const auto parsed = std::from_chars(index_text.data(), index_end, index);
      if (parsed.ec != std::errc() || parsed.ptr != index_end || index < 1) {
        fail("{}:{}: feature index '{}' is not a positive integer", path, line_number, index_text);
      }
      if (index <= previous) {
        fail("{}:{}: feature index {} follows {}; indices must increase", path, line_number, index,
             previous);
      }
      if (num_features > 0 && index > num_features) {
        fail("{}:{}: feature index {} exceeds the declared number of features {}", path,
             line_number, index, num_features);
      }
      double value = 0;
      if (!parse_number(value_text, value)) {
        fail("{}:{}: value '{}' of feature {} is not a finite number", path, line_number,
             value_text, index);
      }
      previous = index;
      max_index = std::max(max_index, index);
      indices.push_back(index - 1);
      values.push_back(value);
    });
    if (!first) row_end.push_back(static_cast<int64_t>(indices.size()));
  });

  if (labels.empty()) fail("{}: no samples; expected lines of 'label index:value ...'", path);
  const int width = num_features > 0 ? num_features : max_index;
  if (width == 0) fail("{}: no features; every line holds only a label", path);
  const auto rows = static_cast<int64_t>(labels.size());
  // Dense storage is what the models compute on: one absurd index makes it huge, so it is
  // bounded before it is allocated.
  limit.check(8.0 * static_cast<double>(rows) * width,
              fmt::format("{}: {} samples x {} features ({}) as a dense matrix", path, rows, width,
                          num_features > 0 ? "data.features" : "the largest feature index"));
  RawTable table;
  table.features = RowMatrix::Zero(rows, width);
  int64_t entry = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (; entry < row_end[r]; ++entry) table.features(r, indices[entry]) = values[entry];
  }
  table.labels = std::move(labels);
  return table;
}

}  // namespace data_internal

Dataset load_libsvm(const std::string& path, int num_features, const MemoryLimit& limit) {
  data_internal::RawTable raw = data_internal::read_libsvm(path, num_features, limit);
  const auto coding = data_internal::LabelCoding::fit({&raw.labels});
  return data_internal::to_dataset(std::move(raw), coding, path);
}

}  // namespace pacer
