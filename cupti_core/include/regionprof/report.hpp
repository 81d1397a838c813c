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
void write_chrome_trace(const trace& source, std::ostream& out);

}  // namespace regionprof
