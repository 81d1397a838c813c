#include "regionprof/cli/number_option.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "regionprof/cli/command_line.hpp"

namespace regionprof::cli {

double parse_number(std::string_view setting, std::string_view text, double low, double high,
                    std::string_view range) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
      value < low || value > high) {
    throw usage_error(std::string(setting) + ": expected " + std::string(range) + ", got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace regionprof::cli
