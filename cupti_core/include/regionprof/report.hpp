// Report writers: JSON (DESIGN.md schema_version 1), Markdown, and a Chrome trace in Kineto's conventions.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "regionprof/analysis.hpp"
#include "regionprof/trace.hpp"

namespace regionprof {

/// How the data behind a report was taken (report `config`, `target`, `input`).
struct report_context {
  std::size_t warmup_runs = 0;
  std::size_t measured_runs = 0;  ///< 0: the number of runs found
  bool uses_inference_function = false;
  std::string created_at;  ///< ISO-8601; empty: the time the report is written
};

/// The JSON report, key for key as DESIGN.md specifies. Times in microseconds (ns / 1000).
///
/// ```
/// std::string text = regionprof::to_json(result, trace, options, regionprof::report_context{});
/// ```
std::string to_json(const analysis_result& result, const trace& source, const analysis_options& options,
                    const report_context& context);

/// A Markdown view: overview, runs, regions, per-run attribution with a residual row, key averages,
/// warnings.
std::string to_markdown(const analysis_result& result, const trace& source,
                        const analysis_options& options, const report_context& context);

/// Writes `source` as a Chrome trace (JSON object with `traceEvents`) in torch.profiler's conventions,
/// loadable by Perfetto and chrome://tracing, and read back exactly by the Kineto importer.
///
/// The format (the contract between this writer and the importer; round trips are exact):
/// - `ts` and `dur` are microseconds written from integer ns with the ns kept as 3 decimals
///   (12345678 ns -> `12345.678`), never through a double.
/// - CPU intervals are complete events (`ph: "X"`) on their (pid, tid) with `cat` from interval_kind:
///   `user_annotation`, `cpu_op`, `python_function`, `cuda_runtime`, `cuda_driver`. API calls carry
///   `args.correlation`; a range in a named NVTX domain carries `args.domain`. Events of one thread are
///   written in trace order, so the importer restores input order (rule 1's tie-break).
/// - Device ops are complete events with `cat` `kernel`, `gpu_memcpy` or `gpu_memset`, `pid` = device,
///   `tid` = stream, and `args` {`device`, `stream`, `correlation`, `bytes` (copies and sets)}.
/// - Each launch gets an `ac2g` flow: `ph: "s"` on the API call, `ph: "f"` (`bp: "e"`) on each of its
///   device ops, `id` = correlation id.
/// - Thread and process names are `ph: "M"` metadata events (`thread_name`, `process_name`).
/// - Top-level `deviceProperties`/`distributedInfo` come from trace::target_extra_json, and a top-level
///   `regionprof` object keeps what Kineto has no place for: {`schema_version`: 1, `target_type`,
///   `device_tracing`, `run_wall_times_ns`, `module_types`, `warnings`: [{`code`, `source`, `message`}]}.
void write_chrome_trace(const trace& source, std::ostream& out);

}  // namespace regionprof
