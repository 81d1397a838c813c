#include <stdexcept>

#include "regionprof/report.hpp"

namespace regionprof {

// Placeholder until the report writers land (issue 2).
std::string to_markdown(const analysis_result&, const trace&, const analysis_options&, const report_context&) {
  throw std::logic_error("regionprof::to_markdown is not implemented yet");
}

}  // namespace regionprof
