#include <stdexcept>

#include "regionprof/analysis.hpp"

namespace regionprof {

// Placeholder until the attribution engine lands (issue 2); fails loudly rather than reporting zeros.
analysis_result analyze(const trace&, const analysis_options&) {
  throw std::logic_error("regionprof::analyze is not implemented yet");
}

}  // namespace regionprof
