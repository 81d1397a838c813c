// The environment through which `regionprof run` configures libregionprof_inject.so in the program it
// starts (docs/cli.md, "regionprof run"). Set them by hand to use the library without
// the CLI: NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH naming it, and these.
#pragma once

namespace regionprof::inject_env {

inline constexpr const char* output = "REGIONPROF_OUTPUT";              ///< JSON profile (default profile.json)
inline constexpr const char* markdown = "REGIONPROF_MARKDOWN";          ///< Markdown report, when set
inline constexpr const char* trace = "REGIONPROF_TRACE";                ///< Chrome trace, when set
inline constexpr const char* run_marker = "REGIONPROF_RUN_MARKER";      ///< --run-marker REGEX
inline constexpr const char* regions = "REGIONPROF_REGIONS";            ///< --region REGEX[=KIND], one per line
inline constexpr const char* cross_thread = "REGIONPROF_CROSS_THREAD";  ///< "1": --cross-thread
inline constexpr const char* row_limit = "REGIONPROF_ROW_LIMIT";        ///< --row-limit N
inline constexpr const char* graph_attribution = "REGIONPROF_GRAPH_ATTRIBUTION";  ///< --graph-attribution MODE
inline constexpr const char* warmup_runs = "REGIONPROF_WARMUP_RUNS";    ///< --warmup-runs N
inline constexpr const char* window_runs = "REGIONPROF_WINDOW_RUNS";    ///< --window-runs N: a profile every N runs
inline constexpr const char* device_buffer_mb = "REGIONPROF_DEVICE_BUFFER_MB";  ///< cap of CUPTI buffers (MiB)
inline constexpr const char* sync_records = "REGIONPROF_SYNC_RECORDS";  ///< "1": CUPTI synchronization records
inline constexpr const char* claim = "REGIONPROF_CLAIM";  ///< file the first process to load the library creates:
                                                          ///< it alone is profiled (unset: every process)

}  // namespace regionprof::inject_env
