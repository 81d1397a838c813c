// The JSON report as a boost::json DOM: to_json serializes it into a string, Profile::write_json
// streams it to the file (report/json_text.hpp, write_json), so the text is never held whole there.
#pragma once

#include <boost/json/object.hpp>

#include "regionprof/analysis.hpp"
#include "regionprof/report.hpp"
#include "regionprof/trace.hpp"

namespace regionprof::report_detail {

/// The report's members in the schema's order (docs/report-schema.md). Throws like to_json.
boost::json::object json_report_object(const analysis_result& result, const trace& source,
                                       const analysis_options& options, const report_context& context);

}  // namespace regionprof::report_detail
