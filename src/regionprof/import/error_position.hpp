// Import errors with their position: the byte offset, and the line and column found by reading the
// input again; the texts that describe bad input in messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "regionprof/import/byte_source.hpp"

namespace regionprof::import_detail {

/// Throws regionprof::import_error for an input, at a byte offset.
class input_errors {
 public:
  /// `reopen` opens the input again from its first byte (for line and column only).
  input_errors(std::string name, std::function<std::unique_ptr<byte_source>()> reopen)
      : name_(std::move(name)), reopen_(std::move(reopen)) {}

  [[noreturn]] void fail(std::uint64_t offset, std::string problem) const;
  /// The input's name, as errors give it.
  const std::string& file() const noexcept { return name_; }

 private:
  /// Line and column (1-based, bytes) of `offset`; {0, 0} when the input cannot be read again.
  std::pair<std::uint64_t, std::uint64_t> locate(std::uint64_t offset) const noexcept;

  std::string name_;
  std::function<std::unique_ptr<byte_source>()> reopen_;
};

/// `text` in single quotes, its first 80 bytes, control characters as '?'.
std::string quote_text(std::string_view text);
/// A byte for messages: 'c' when printable, else its hex; -1 is the end of the input.
std::string describe_byte(int c);

/// Where stage 1 of a window failed: a scalar re-scan finds the first invalid byte.
struct text_problem {
  const char* where = nullptr;  // null: no problem found
  std::string what;
};

/// The first invalid UTF-8 sequence, raw control character in a string or unterminated string in
/// [begin, end).
text_problem find_text_problem(const char* begin, const char* end);

}  // namespace regionprof::import_detail
