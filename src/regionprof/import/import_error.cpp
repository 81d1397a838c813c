#include <string>
#include <utility>

#include "regionprof/import/import.hpp"

namespace regionprof {
namespace {

std::string format_message(const std::string& file, const std::string& problem,
                           std::optional<std::uint64_t> offset, std::uint64_t line, std::uint64_t column) {
  std::string text = file + ": " + problem;
  if (offset) {
    text += " (at ";
    if (line != 0) text += "line " + std::to_string(line) + ", column " + std::to_string(column) + ", ";
    text += "byte offset " + std::to_string(*offset) + ")";
  }
  return text;
}

}  // namespace

import_error::import_error(std::string file, std::string problem, std::optional<std::uint64_t> offset,
                           std::uint64_t line, std::uint64_t column)
    : std::runtime_error(format_message(file, problem, offset, line, column)),
      file_(std::move(file)),
      problem_(std::move(problem)),
      offset_(offset),
      line_(line),
      column_(column) {}

}  // namespace regionprof
