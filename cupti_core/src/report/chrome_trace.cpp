#include <ostream>
#include <stdexcept>

#include "regionprof/report.hpp"

namespace regionprof {

// Placeholder until the report writers land (issue 2).
void write_chrome_trace(const trace&, std::ostream&) {
  throw std::logic_error("regionprof::write_chrome_trace is not implemented yet");
}

}  // namespace regionprof
