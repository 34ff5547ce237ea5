// Line handling, number parsing and label coding shared by the text loaders.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "internal.h"
#include "pacer/core/error.h"

namespace pacer::data_internal {

void check_text_size(const std::string& path, const MemoryLimit& limit) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || GzFile(path).compressed()) return;
  limit.check(static_cast<double>(size), fmt::format("{}: reading a text file of this size", path));
}

void for_each_line(std::string_view text, const std::function<void(std::string_view, int)>& visit) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view content = trim(line);
    if (!content.empty() && content.front() != '#') visit(line, number);
    start = end + 1;
  }
}

bool parse_number(std::string_view token, double& value) {
  // from_chars rejects a leading '+', which LIBSVM files use for labels ("+1").
  if (token.size() > 1 && token.front() == '+' && token[1] != '-' && token[1] != '+') {
    token.remove_prefix(1);
  }
  const char* end = token.data() + token.size();
  const auto result = std::from_chars(token.data(), end, value);
  return !token.empty() && result.ec == std::errc() && result.ptr == end && std::isfinite(value);
}

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

LabelCoding LabelCoding::fit(const std::vector<const std::vector<double>*>& label_sets) {
  LabelCoding coding;
  coding.classification_ = true;
  for (const std::vector<double>* labels : label_sets) {
    for (double label : *labels) {
      if (label != std::floor(label)) {
        coding.classification_ = false;
        coding.values_.clear();
        return coding;
      }
    }
    coding.values_.insert(coding.values_.end(), labels->begin(), labels->end());
    std::sort(coding.values_.begin(), coding.values_.end());
    coding.values_.erase(std::unique(coding.values_.begin(), coding.values_.end()),
                         coding.values_.end());
  }
  return coding;
}

Vec LabelCoding::apply(const std::vector<double>& labels) const {
  Vec out(static_cast<Eigen::Index>(labels.size()));
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!classification_) {
      out[i] = labels[i];
      continue;
    }
    const auto it = std::lower_bound(values_.begin(), values_.end(), labels[i]);
    PACER_CHECK(it != values_.end() && *it == labels[i]);
    out[i] = static_cast<double>(it - values_.begin());
  }
  return out;
}

Dataset to_dataset(RawTable raw, const LabelCoding& coding, const std::string& name) {
  Dataset data;
  data.labels = coding.apply(raw.labels);
  data.features = std::move(raw.features);
  data.num_classes = coding.classification() ? coding.num_classes() : 0;
  data.name = name;
  return data;
}

}  // namespace pacer::data_internal
