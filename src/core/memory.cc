#include "pacer/core/memory.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "pacer/core/error.h"

namespace pacer {

MemoryLimit MemoryLimit::system_default() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return MemoryLimit(8e9, false);
  return MemoryLimit(0.5 * static_cast<double>(pages) * static_cast<double>(page_size), false);
}

MemoryLimit MemoryLimit::from_config(const Config& config) {
  if (!config.has("memory_limit_gb")) return system_default();
  const double gb = config.get_double("memory_limit_gb", 0);
  if (!(gb > 0) || !std::isfinite(gb)) {
    config.fail_key("memory_limit_gb", "a finite number of GB (10^9 bytes) > 0");
  }
  return MemoryLimit(gb * 1e9, true);
}

void MemoryLimit::check(double bytes, std::string_view what) const {
  if (bytes <= bytes_) return;
  fail("{} needs {}, above the memory limit of {} ({})", what, format_bytes(bytes),
       format_bytes(bytes_),
       from_key_ ? "memory_limit_gb" : "memory_limit_gb; default: half of physical memory");
}

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  while (bytes >= 999.5 && unit < 6) {
    bytes /= 1000;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} bytes", bytes);
  return fmt::format("{:.3g} {}", bytes, kUnits[unit]);
}

}  // namespace pacer
