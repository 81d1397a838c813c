#include <stdexcept>

#include "regionprof/report.hpp"

namespace regionprof {

// Placeholder until the report writers land (issue 2).
std::string to_json(const analysis_result&, const trace&, const analysis_options&, const report_context&) {
  throw std::logic_error("regionprof::to_json is not implemented yet");
}

}  // namespace regionprof
