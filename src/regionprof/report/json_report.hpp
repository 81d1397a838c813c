// The JSON report, written member by member (json/json_text.hpp, json_object_writer): to_json
// into a string, Profile::write_json streamed to the file, so neither the text nor a DOM of the whole
// report is held there.
#pragma once

#include <iosfwd>
#include <string>

#include <boost/json/object.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::report_detail {

/// The report (docs/report-schema.md), without the final newline, appended to `text`, handed to
/// `stream` in pieces when there is one (then `text` is left empty). `depth`: the report object's depth
/// when it is a member's value (a job report's rank profiles, depth 3), indented to match. Throws like to_json.
void write_json_report(std::string& text, std::ostream* stream, const analysis_result& result, const trace& source,
                       const analysis_options& options, const report_context& context, int depth = 0);

/// A warning as the reports write it: `{"code", "message", "source"}` (the report's, a job's, a diff's).
boost::json::object warning_object(const warning& item);

}  // namespace regionprof::report_detail
