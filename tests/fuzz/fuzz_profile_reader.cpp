// libFuzzer target: bytes as a saved profile through read_profile_text, and the profile read written
// again. Only profile_read_error (an unreadable or malformed profile) is an expected outcome: what the
// reader accepts, the writers write.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const regionprof::Profile profile = regionprof::read_profile_text(text, "fuzz-input");
    // Every region index points into the result's tables (the JSON writer checks them, and throws
    // std::invalid_argument otherwise: a crash here).
    (void)regionprof::to_json(profile);
  } catch (const regionprof::profile_read_error&) {
  }
  return 0;
}
