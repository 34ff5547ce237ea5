#include "pacer/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace pacer {

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pacer: internal error: check '%s' failed at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace pacer
