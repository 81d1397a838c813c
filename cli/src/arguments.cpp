#include "arguments.hpp"

#include <charconv>
#include <string>

namespace regionprof::cli {

std::optional<std::string> arguments::value_of(std::string_view name) {
  if (done() || only_positionals_) return std::nullopt;
  const std::string_view arg = peek();
  const bool short_flag = name.size() == 2 && name[0] == '-' && name[1] != '-';
  if (arg == name) {
    take();
    if (done()) throw usage_error("option " + std::string(name) + " needs a value");
    return std::string(take());
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name) {
    if (arg[name.size()] == '=') {
      take();
      return std::string(arg.substr(name.size() + 1));
    }
    if (short_flag) {
      take();
      return std::string(arg.substr(name.size()));
    }
  }
  return std::nullopt;
}

bool arguments::switch_of(std::string_view name) {
  if (done() || only_positionals_) return false;
  const std::string_view arg = peek();
  if (arg == name) {
    take();
    return true;
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
    throw usage_error("option " + std::string(name) + " takes no value");
  }
  return false;
}

std::size_t parse_count(std::string_view flag, std::string_view text, std::size_t min, std::size_t max) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < min || value > max) {
    throw usage_error("option " + std::string(flag) + " needs a whole number from " + std::to_string(min) + " to " +
                      std::to_string(max) + ", got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace regionprof::cli
