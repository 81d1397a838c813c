// operator<< for the core's enums, so Boost.Test can print them in failed assertions.
#pragma once

#include <ostream>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

inline std::ostream& operator<<(std::ostream& out, warning_code code) { return out << to_string(code); }
inline std::ostream& operator<<(std::ostream& out, warning_source source) { return out << to_string(source); }
inline std::ostream& operator<<(std::ostream& out, device_type type) { return out << to_string(type); }

}  // namespace regionprof
