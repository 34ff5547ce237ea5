// .npy files: the header, the element types, memory-mapping and conversion to doubles.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>

#include "internal.h"
#include "numpy.h"
#include "pacer/core/error.h"

namespace pacer::data_internal {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr const char* kSupportedTypes =
    "float64, float32, int8/16/32/64, uint8/16/32/64 or bool (descr '<f8', '<f4', '<i8', '|u1', "
    "'|b1', ...)";

// A value of the header's dict: a string, True/False/None, a tuple of integers, or a list (only a
// structured dtype's descr is one).
struct HeaderValue {
  enum class Kind { kString, kBool, kNone, kInts, kList } kind = Kind::kNone;
  std::string text;
  bool flag = false;
  std::vector<uint64_t> ints;
};

// A parser of the Python literal subset .npy headers use. Errors start with `name`.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  std::map<std::string, HeaderValue> dict() {
    expect('{');
    std::map<std::string, HeaderValue> out;
    while (!take('}')) {
      const std::string key = quoted();
      expect(':');
      out[key] = value();
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    return out;
  }

 private:
  [[noreturn]] void bad(std::string_view what) const {
    fail("{}: not a NumPy .npy header ({} at byte {} of the header \"{}\")", name_, what, pos_,
         text_.substr(0, 120));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) bad(fmt::format("expected '{}'", c));
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) bad("expected a key");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) bad("an unterminated string");
    std::string out(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  std::string word() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0)) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  uint64_t integer() {
    const std::string digits = word();
    uint64_t value = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
    // Python 2 wrote long integers with an 'L' suffix.
    if (digits.empty() || ec != std::errc() || (ptr != end && std::string_view(ptr) != "L")) {
      bad("expected a non-negative integer in the shape");
    }
    return value;
  }
  // Skips a list (a structured dtype's descr), strings and nested brackets included.
  void skip_list() {
    int depth = 0;
    do {
      skip_space();
      if (pos_ >= text_.size()) bad("an unterminated list");
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        quoted();
        continue;
      }
      depth += (c == '[' || c == '(') ? 1 : (c == ']' || c == ')') ? -1 : 0;
      ++pos_;
    } while (depth > 0);
  }
  HeaderValue value() {
    HeaderValue v;
    skip_space();
    const char c = pos_ < text_.size() ? text_[pos_] : '\0';
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::Kind::kString;
      v.text = quoted();
    } else if (c == '[') {
      v.kind = HeaderValue::Kind::kList;
      skip_list();
    } else if (take('(')) {
      v.kind = HeaderValue::Kind::kInts;
      while (!take(')')) {
        v.ints.push_back(integer());
        if (!take(',')) {
          expect(')');
          break;
        }
      }
    } else {
      const std::string w = word();
      if (w != "True" && w != "False" && w != "None") bad("expected a value");
      v.kind = w == "None" ? HeaderValue::Kind::kNone : HeaderValue::Kind::kBool;
      v.flag = w == "True";
    }
    return v;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

NpyType parse_type(const HeaderValue& descr, const std::string& name) {
  if (descr.kind == HeaderValue::Kind::kList) {
    fail("{} holds a structured dtype (named fields); expected a plain numeric dtype: {}", name,
         kSupportedTypes);
  }
  if (descr.kind != HeaderValue::Kind::kString) fail("{}: header 'descr' is not a string", name);
  NpyType type;
  type.descr = descr.text;
  const std::string& d = descr.text;
  const bool ok_order = d.size() >= 3 && std::strchr("<>|=", d[0]) != nullptr;
  type.kind = ok_order ? d[1] : '?';
  int bytes = 0;
  const auto [ptr, ec] =
      std::from_chars(d.data() + std::min<size_t>(2, d.size()), d.data() + d.size(), bytes);
  const bool sized = ok_order && ec == std::errc() && ptr == d.data() + d.size();
  const bool valid = sized && ((type.kind == 'f' && (bytes == 4 || bytes == 8)) ||
                               ((type.kind == 'i' || type.kind == 'u') &&
                                (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) ||
                               (type.kind == 'b' && bytes == 1));
  if (!valid) fail("{} holds dtype '{}'; expected {}", name, d, kSupportedTypes);
  type.bytes = bytes;
  type.big_endian = d[0] == '>' || (d[0] == '=' && std::endian::native == std::endian::big);
  return type;
}

// The product of `shape` times `item` bytes; an Error when it does not fit in 64 bits.
uint64_t checked_bytes(const std::vector<uint64_t>& shape, uint64_t item, const std::string& name) {
  uint64_t total = item;
  for (uint64_t d : shape) {
    if (d != 0 && total > std::numeric_limits<uint64_t>::max() / d) {
      fail("{}: header shape overflows 64 bits", name);
    }
    total *= d;
  }
  return total;
}

template <typename T>
void convert(const char* in, uint64_t n, bool swap, double* out) {
  char bytes[sizeof(T)];
  for (uint64_t i = 0; i < n; ++i) {
    std::memcpy(bytes, in + i * sizeof(T), sizeof(T));
    if (swap) std::reverse(bytes, bytes + sizeof(T));
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    out[i] = static_cast<double>(value);
  }
}

// A read-only memory map of a whole file.
class Mapping {
 public:
  Mapping(void* address, size_t size) : address_(address), size_(size) {}
  ~Mapping() {
    if (size_ > 0) munmap(address_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(address_), size_}; }

 private:
  void* address_;
  size_t size_;
};

}  // namespace

uint64_t NpyArray::count() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::shape_text() const {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

void NpyArray::to_doubles(uint64_t first, uint64_t n, double* out) const {
  PACER_CHECK(first + n <= count());
  const char* in = data.data() + first * static_cast<uint64_t>(type.bytes);
  const bool swap = type.bytes > 1 && type.big_endian != (std::endian::native == std::endian::big);
  switch (type.kind * 16 + type.bytes) {
    case 'f' * 16 + 8:
      return convert<double>(in, n, swap, out);
    case 'f' * 16 + 4:
      return convert<float>(in, n, swap, out);
    case 'i' * 16 + 8:
      return convert<int64_t>(in, n, swap, out);
    case 'i' * 16 + 4:
      return convert<int32_t>(in, n, swap, out);
    case 'i' * 16 + 2:
      return convert<int16_t>(in, n, swap, out);
    case 'i' * 16 + 1:
      return convert<int8_t>(in, n, swap, out);
    case 'u' * 16 + 8:
      return convert<uint64_t>(in, n, swap, out);
    case 'u' * 16 + 4:
      return convert<uint32_t>(in, n, swap, out);
    case 'u' * 16 + 2:
      return convert<uint16_t>(in, n, swap, out);
    case 'u' * 16 + 1:
    case 'b' * 16 + 1:
      return convert<uint8_t>(in, n, swap, out);
    default:
      PACER_CHECK(false);
  }
}

NpyArray parse_npy(std::string_view bytes, std::shared_ptr<const void> owner,
                   const std::string& name, const std::string& file) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    fail("{}: not a NumPy .npy file (it does not start with \"\\x93NUMPY\")", name);
  }
  if (bytes.size() < 10) fail("{} is truncated: it ends inside the .npy preamble", name);
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3) {
    fail("{}: .npy format version {}.{}; expected 1.0, 2.0 or 3.0", name, major, minor);
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) fail("{} is truncated: it ends inside the preamble", name);
  uint64_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= uint64_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
  }
  const uint64_t data_offset = 8 + length_bytes + header_length;
  if (data_offset > bytes.size()) {
    fail("{} is truncated: its header of {} bytes ends past the file's end ({} bytes)", name,
         header_length, bytes.size());
  }
  auto dict = HeaderParser(bytes.substr(8 + length_bytes, header_length), name).dict();
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.count(key)) fail("{}: the .npy header lacks '{}'", name, key);
  }
  NpyArray array;
  array.name = name;
  array.file = file;
  array.type = parse_type(dict["descr"], name);
  if (dict["fortran_order"].kind != HeaderValue::Kind::kBool) {
    fail("{}: header 'fortran_order' is not True or False", name);
  }
  if (dict["fortran_order"].flag) {
    fail(
        "{} holds a Fortran-ordered (column-major) array; pacer reads C order: save "
        "np.ascontiguousarray(a) instead",
        name);
  }
  if (dict["shape"].kind != HeaderValue::Kind::kInts) fail("{}: header 'shape' is no tuple", name);
  array.shape = dict["shape"].ints;
  const uint64_t expected = checked_bytes(array.shape, array.type.bytes, name);
  const uint64_t present = bytes.size() - data_offset;
  if (present != expected) {
    fail("{} {}: its header describes shape {} of '{}' ({} bytes of data), the file holds {}", name,
         present < expected ? "is truncated" : "has bytes past its array", array.shape_text(),
         array.type.descr, expected, present);
  }
  array.data = bytes.substr(data_offset);
  array.owner = std::move(owner);
  return array;
}

std::pair<std::string_view, std::shared_ptr<const void>> map_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open file: {}", path, std::strerror(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    fail("{}: not a regular file", path);
  }
  const auto size = static_cast<size_t>(info.st_size);
  void* address = nullptr;
  if (size > 0) {
    address = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      close(fd);
      fail("{}: cannot map file into memory: {}", path, std::strerror(error));
    }
  }
  close(fd);
  auto mapping = std::make_shared<const Mapping>(address, size);
  return {mapping->bytes(), mapping};
}

bool is_zip(const std::string& path) {
  GzFile file(path);
  const std::string head = file.read_up_to(4);
  return !file.compressed() && (head == "PK\x03\x04" || head == "PK\x05\x06");
}

NpyArray read_npy(const std::string& path, const std::string& name, const MemoryLimit& limit) {
  GzFile file(path);
  file.read_up_to(1);
  if (!file.compressed()) {
    auto [bytes, owner] = map_file(path);
    return parse_npy(bytes, std::move(owner), name, path);
  }
  // A gzip-compressed file is held whole once decompressed: refused above the limit.
  auto text = std::make_shared<std::string>(
      GzFile(path).read_up_to(static_cast<uint64_t>(std::min(limit.bytes(), 1.8e19)) + 1));
  limit.check(static_cast<double>(text->size()),
              fmt::format("{}: a gzip-compressed .npy file, decompressed", name));
  const std::string_view bytes = *text;
  return parse_npy(bytes, std::move(text), name, path);
}

}  // namespace pacer::data_internal
