#include "support/shared_traces.hpp"

#include <cstdio>
#include <cstdlib>

namespace regionprof::test {

std::string shared_trace(const std::string& file) {
  const char* dir = std::getenv("REGIONPROF_TRACES_DIR");
  if (dir == nullptr || *dir == '\0') {
    std::printf("skipped: REGIONPROF_TRACES_DIR is not set (scripts/test sets it to ../shared/traces)\n");
    std::fflush(stdout);
    std::exit(77);
  }
  return std::string(dir) + "/" + file;
}

}  // namespace regionprof::test
