#include "output_file.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "command_line.hpp"

namespace regionprof::cli {

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open '" + path + "' for writing: " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("writing '" + path + "' failed (disk full?)");
}

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
