// .npz archives: the zip container (central directory, ZIP64 sizes), stored and deflated entries.
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "numpy.h"
#include "pacer/core/error.h"

namespace pacer::data_internal {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kMissing32 = 0xffffffff;  // "see the ZIP64 record"
constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;

struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

// Little-endian reads that stay inside the archive; anything outside is a corrupt archive.
class Reader {
 public:
  Reader(std::string_view zip, const std::string& name) : zip_(zip), name_(name) {}
  uint64_t get(uint64_t offset, int bytes) const {
    if (offset > zip_.size() || zip_.size() - offset < static_cast<uint64_t>(bytes)) corrupt();
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= uint64_t{static_cast<unsigned char>(zip_[offset + i])} << (8 * i);
    }
    return value;
  }
  std::string_view slice(uint64_t offset, uint64_t size) const {
    if (offset > zip_.size() || zip_.size() - offset < size) corrupt();
    return zip_.substr(offset, size);
  }
  [[noreturn]] void corrupt() const {
    fail("{} is a truncated or corrupt zip archive (an .npz file as np.savez writes)", name_);
  }
  size_t size() const { return zip_.size(); }

 private:
  std::string_view zip_;
  const std::string& name_;
};

// The offset of the end-of-central-directory record: the last one within the final 64 KiB (a
// trailing comment may follow it).
uint64_t find_end_record(const Reader& zip) {
  constexpr uint64_t kRecord = 22, kMaxComment = 0xffff;
  if (zip.size() < kRecord) zip.corrupt();
  const uint64_t lowest =
      zip.size() - kRecord - std::min<uint64_t>(kMaxComment, zip.size() - kRecord);
  for (uint64_t at = zip.size() - kRecord + 1; at-- > lowest;) {
    if (zip.get(at, 4) == kEndOfDirectory) return at;
  }
  zip.corrupt();
}

// Replaces the 32-bit fields that say "see ZIP64" by the values of the entry's ZIP64 extra field.
void apply_zip64(const Reader& zip, uint64_t extra, uint64_t extra_length, ZipEntry& entry) {
  for (uint64_t at = extra; at + 4 <= extra + extra_length;) {
    const uint64_t tag = zip.get(at, 2), length = zip.get(at + 2, 2);
    if (tag == 1) {
      uint64_t field = at + 4;
      for (uint64_t* value : {&entry.size, &entry.compressed, &entry.local_offset}) {
        if (*value != kMissing32 || field + 8 > at + 4 + length) continue;
        *value = zip.get(field, 8);
        field += 8;
      }
    }
    at += 4 + length;
  }
}

std::vector<ZipEntry> central_directory(const Reader& zip) {
  const uint64_t end = find_end_record(zip);
  uint64_t entries = zip.get(end + 10, 2);
  uint64_t offset = zip.get(end + 16, 4);
  if (entries == 0xffff || offset == kMissing32) {
    if (end < 20 || zip.get(end - 20, 4) != kZip64Locator) zip.corrupt();
    const uint64_t record = zip.get(end - 20 + 8, 8);
    if (zip.get(record, 4) != kZip64End) zip.corrupt();
    entries = zip.get(record + 32, 8);
    offset = zip.get(record + 48, 8);
  }
  std::vector<ZipEntry> out;
  for (uint64_t i = 0; i < entries; ++i) {
    if (zip.get(offset, 4) != kCentralHeader) zip.corrupt();
    ZipEntry entry;
    entry.flags = static_cast<uint16_t>(zip.get(offset + 8, 2));
    entry.method = static_cast<uint16_t>(zip.get(offset + 10, 2));
    entry.crc = static_cast<uint32_t>(zip.get(offset + 16, 4));
    entry.compressed = zip.get(offset + 20, 4);
    entry.size = zip.get(offset + 24, 4);
    const uint64_t name_length = zip.get(offset + 28, 2), extra_length = zip.get(offset + 30, 2),
                   comment_length = zip.get(offset + 32, 2);
    entry.local_offset = zip.get(offset + 42, 4);
    entry.name = std::string(zip.slice(offset + 46, name_length));
    apply_zip64(zip, offset + 46 + name_length, extra_length, entry);
    out.push_back(std::move(entry));
    offset += 46 + name_length + extra_length + comment_length;
  }
  return out;
}

// The entry's bytes as stored in the archive (compressed, for a deflated entry).
std::string_view stored_bytes(const Reader& zip, const ZipEntry& entry) {
  if (zip.get(entry.local_offset, 4) != kLocalHeader) zip.corrupt();
  const uint64_t name_length = zip.get(entry.local_offset + 26, 2);
  const uint64_t extra_length = zip.get(entry.local_offset + 28, 2);
  return zip.slice(entry.local_offset + 30 + name_length + extra_length, entry.compressed);
}

// Inflates a raw deflate stream into exactly `size` bytes.
std::shared_ptr<std::string> inflate_entry(std::string_view in, uint64_t size,
                                           const std::string& name) {
  auto out = std::make_shared<std::string>(size, '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) fail("{}: cannot start zlib", name);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.next_out = reinterpret_cast<Bytef*>(out->data());
  uint64_t in_left = in.size(), out_left = size;
  int status = Z_OK;
  while (status == Z_OK) {
    constexpr uint64_t kChunk = std::numeric_limits<uInt>::max();
    const auto in_chunk = static_cast<uInt>(std::min(in_left, kChunk));
    const auto out_chunk = static_cast<uInt>(std::min(out_left, kChunk));
    stream.avail_in = in_chunk;
    stream.avail_out = out_chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    in_left -= in_chunk - stream.avail_in;
    out_left -= out_chunk - stream.avail_out;
    if (status == Z_OK && in_chunk == stream.avail_in && out_chunk == stream.avail_out) break;
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END || out_left != 0) {
    fail("{}: corrupt deflate data (it does not inflate to the {} bytes the archive states)", name,
         size);
  }
  return out;
}

NpyArray read_entry(const Reader& zip, const ZipEntry& entry, const std::string& name,
                    const std::string& file, const std::shared_ptr<const void>& archive,
                    const MemoryLimit& limit) {
  if ((entry.flags & 1) != 0) fail("{} is encrypted; pacer reads unencrypted .npz files", name);
  const std::string_view raw = stored_bytes(zip, entry);
  std::string_view bytes = raw;
  std::shared_ptr<const void> owner = archive;
  if (entry.method == kDeflated) {
    limit.check(static_cast<double>(entry.size), fmt::format("{}, inflated", name));
    auto inflated = inflate_entry(raw, entry.size, name);
    bytes = *inflated;
    owner = std::move(inflated);
  } else if (entry.method != kStored || entry.size != entry.compressed) {
    fail(
        "{} uses zip compression method {}; expected stored (np.savez) or deflate "
        "(np.savez_compressed)",
        name, entry.method);
  }
  if (crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()) != entry.crc) {
    fail("{} is corrupt: its CRC-32 does not match the archive's", name);
  }
  return parse_npy(bytes, std::move(owner), name, file);
}

}  // namespace

std::map<std::string, NpyArray> read_npz(const std::string& path, const std::string& name,
                                         const std::vector<std::string>& wanted,
                                         const MemoryLimit& limit) {
  auto [bytes, archive] = map_file(path);
  const Reader zip(bytes, name);
  const std::vector<ZipEntry> entries = central_directory(zip);
  std::map<std::string, NpyArray> out;
  for (const std::string& array : wanted) {
    const auto entry = std::find_if(entries.begin(), entries.end(),
                                    [&](const ZipEntry& e) { return e.name == array + ".npy"; });
    if (entry == entries.end()) {
      std::vector<std::string> held;
      for (const ZipEntry& e : entries) {
        held.push_back(e.name.size() > 4 && e.name.ends_with(".npy")
                           ? e.name.substr(0, e.name.size() - 4)
                           : e.name);
      }
      fail("{} holds arrays [{}]; expected {}, as np.savez(file, X=features, y=labels) writes",
           name, fmt::join(held, ", "), fmt::join(wanted, " and "));
    }
    out.emplace(array, read_entry(zip, *entry, fmt::format("{}, array {}", name, array),
                                  fmt::format("array {} of {}", array, path), archive, limit));
  }
  return out;
}

}  // namespace pacer::data_internal
