// libFuzzer target: bytes as a saved profile through read_profile_text. Only profile_read_error (an
// unreadable or malformed profile) is an expected outcome.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "regionprof/profile_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const regionprof::saved_profile profile = regionprof::read_profile_text(text, "fuzz-input");
    // Every modelled run points at data the struct owns; touch it so that a bad index would show.
    for (const regionprof::saved_run& run : profile.runs) {
      for (const regionprof::saved_region_time& region : run.regions) (void)region.region_id.size();
    }
  } catch (const regionprof::profile_read_error&) {
  }
  return 0;
}
