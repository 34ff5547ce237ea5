// The memory limit on what a run's input makes pacer allocate (DESIGN.md section 7: bad input
// gets one clear message, never a crash or an exhausted machine).
//
// Before a loader, generator or model allocates storage whose size comes from the input (a file
// header, a LIBSVM feature index, data.samples, model.hidden), it estimates the bytes and calls
// MemoryLimit::check, which refuses anything above the limit with an Error naming the file or key
// and both sizes. The limit is the top-level key memory_limit_gb (GB = 10^9 bytes, > 0); by
// default it is half of the machine's physical memory, which leaves room for the operating
// system, other processes and the allocations the estimates leave out.
#pragma once

#include <string>
#include <string_view>

#include "pacer/core/config.h"

namespace pacer {

class MemoryLimit {
 public:
  // Half of physical memory (sysconf); 8 GB where the system does not say.
  static MemoryLimit system_default();
  // memory_limit_gb when the config holds it (an Error unless a finite number > 0), else
  // system_default(). The key is read only when present, so that config.toml does not record a
  // machine-dependent default (and MPI worker ranks on other hosts use their own).
  static MemoryLimit from_config(const Config& config);

  double bytes() const { return bytes_; }
  // Throws Error "{what} needs {size}, above the memory limit of {limit} ({where it came from})"
  // when `bytes` exceeds the limit. `what` names the file or key that asks for the memory.
  void check(double bytes, std::string_view what) const;

 private:
  MemoryLimit(double bytes, bool from_key) : bytes_(bytes), from_key_(from_key) {}
  double bytes_;
  bool from_key_;
};

// "800 GB", "12.8 GB", "3.2 GB", "27.6 kB", "512 bytes" (decimal units, 3 significant digits).
std::string format_bytes(double bytes);

}  // namespace pacer
