// CSV with numeric fields and an optional header line.
#include <cstdint>
#include <vector>

#include "internal.h"
#include "pacer/core/error.h"
#include "pacer/data/loaders.h"

namespace pacer {
namespace data_internal {
namespace {

void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(trim(line.substr(start)));
      return;
    }
    fields.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

}  // namespace

RawTable read_csv(const std::string& path, int label_column, const MemoryLimit& limit) {
  check_text_size(path, limit);
  const std::string text = GzFile(path).read_rest();

  std::vector<std::string_view> fields;
  std::vector<double> features;  // row-major
  std::vector<double> labels;
  std::vector<double> row;
  int columns = 0;  // fixed by the first line
  int label = 0;
  for_each_line(text, [&](std::string_view line, int line_number) {
    split_fields(line, fields);
    const bool first = columns == 0;
    if (first) {
      columns = static_cast<int>(fields.size());
      if (columns < 2) {
        fail("{}:{}: found {} column; expected a label and at least one feature", path, line_number,
             columns);
      }
      label = label_column < 0 ? columns + label_column : label_column;
      if (label < 0 || label >= columns) {
        fail("{}:{}: label column {} is out of range for {} columns", path, line_number,
             label_column, columns);
      }
    } else if (static_cast<int>(fields.size()) != columns) {
      fail("{}:{}: expected {} fields, found {}", path, line_number, columns, fields.size());
    }
    row.resize(columns);
    for (int c = 0; c < columns; ++c) {
      if (parse_number(fields[c], row[c])) continue;
      if (first) return;  // a header line
      fail("{}:{}: field {} ('{}') is not a finite number", path, line_number, c + 1, fields[c]);
    }
    for (int c = 0; c < columns; ++c) {
      if (c == label) {
        labels.push_back(row[c]);
      } else {
        features.push_back(row[c]);
      }
    }
  });

  if (labels.empty()) fail("{}: no data rows", path);
  const auto rows = static_cast<Eigen::Index>(labels.size());
  // The parsed values are held twice while they are copied into the matrix.
  limit.check(16.0 * static_cast<double>(rows) * (columns - 1) + static_cast<double>(text.size()),
              fmt::format("{}: {} rows x {} features as a dense matrix", path, rows, columns - 1));
  RawTable table;
  table.features = Eigen::Map<const RowMatrix>(features.data(), rows, columns - 1);
  table.labels = std::move(labels);
  return table;
}

}  // namespace data_internal

Dataset load_csv(const std::string& path, int label_column, const MemoryLimit& limit) {
  data_internal::RawTable raw = data_internal::read_csv(path, label_column, limit);
  const auto coding = data_internal::LabelCoding::fit({&raw.labels});
  return data_internal::to_dataset(std::move(raw), coding, path);
}

}  // namespace pacer
