// The real torch.profiler traces beside the repository (REGIONPROF_TRACES_DIR, set by scripts/test).
#pragma once

#include <string>

namespace regionprof::test {

/// `$REGIONPROF_TRACES_DIR/<file>`; without the variable the test program prints why and exits 77,
/// which ctest reports as skipped.
std::string shared_trace(const std::string& file);

}  // namespace regionprof::test
