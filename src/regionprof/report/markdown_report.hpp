// The Markdown report, written section by section: to_markdown into a string, Profile::write_markdown
// streamed to the file, so the report is never one string there (each section still is).
#pragma once

#include <iosfwd>
#include <string>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::report_detail {

/// The report appended to `out`, handed to `stream` in pieces when there is one (then `out` is left
/// empty). Throws like to_markdown.
void write_markdown_report(std::string& out, std::ostream* stream, const analysis_result& result, const trace& source,
                           const analysis_options& options, const report_context& context,
                           const markdown_options& markdown);

}  // namespace regionprof::report_detail
