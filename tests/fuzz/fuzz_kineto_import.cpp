// libFuzzer target: bytes as a Kineto / torch.profiler trace (plain or gzip) through the importer, then
// the analysis with default options and with a regex run marker and region rule. Only import_error
// (malformed input) is an expected outcome; anything else escaping is a bug the fuzzer reports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  regionprof::trace imported;
  try {
    // Small windows so that window growth and events spanning windows are exercised on small inputs.
    regionprof::kineto_import_options options;
    options.window_bytes = 256;
    options.max_event_bytes = std::size_t{1} << 20;
    imported = regionprof::import_kineto_trace_text(bytes, "fuzz-input", options);
  } catch (const regionprof::import_error&) {
    return 0;
  }

  (void)regionprof::analyze(imported, regionprof::analysis_options{});

  regionprof::analysis_options regex_options;
  regex_options.run_marker = {regionprof::match_kind::regex, "ProfilerStep#\\d+", "region", ""};
  regex_options.region_rules = {{regionprof::match_kind::regex, "(aten::[a-z]+).*", "op", ""},
                                {regionprof::match_kind::prefix, "## ", "phase", ""}};
  regex_options.cross_thread = true;
  regex_options.skip_runs = 1;
  (void)regionprof::analyze(imported, regex_options);
  return 0;
}
