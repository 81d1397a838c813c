#include "regionprof/warnings.hpp"

namespace regionprof {

std::string_view to_string(warning_code code) noexcept {
  switch (code) {
    case warning_code::unmapped_region_events: return "UNMAPPED_REGION_EVENTS";
    case warning_code::uncorrelated_device_ops: return "UNCORRELATED_DEVICE_OPS";
    case warning_code::off_thread_events: return "OFF_THREAD_EVENTS";
    case warning_code::no_run_markers: return "NO_RUN_MARKERS";
    case warning_code::run_count_mismatch: return "RUN_COUNT_MISMATCH";
    case warning_code::overlapping_ranges: return "OVERLAPPING_RANGES";
    case warning_code::unbalanced_ranges: return "UNBALANCED_RANGES";
    case warning_code::clock_anomaly: return "CLOCK_ANOMALY";
    case warning_code::device_tracing_unavailable: return "DEVICE_TRACING_UNAVAILABLE";
    case warning_code::cupti_subscriber_conflict: return "CUPTI_SUBSCRIBER_CONFLICT";
    case warning_code::nvtx_tool_conflict: return "NVTX_TOOL_CONFLICT";
    case warning_code::dropped_device_records: return "DROPPED_DEVICE_RECORDS";
    case warning_code::dropped_host_records: return "DROPPED_HOST_RECORDS";
    case warning_code::cupti_overhead: return "CUPTI_OVERHEAD";
  }
  return "UNKNOWN";
}

std::string_view to_string(warning_source source) noexcept {
  switch (source) {
    case warning_source::core: return "core";
    case warning_source::nvtx: return "nvtx";
    case warning_source::cupti: return "cupti";
    case warning_source::import: return "import";
  }
  return "core";
}

}  // namespace regionprof
