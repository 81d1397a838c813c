#include "regionprof/import/error_position.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "regionprof/import/import.hpp"

namespace regionprof::import_detail {
namespace {

/// Length of the valid UTF-8 sequence at p (p < end), or 0 when invalid.
std::size_t utf8_sequence(const unsigned char* p, const unsigned char* end) noexcept {
  const unsigned c = p[0];
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned min = 0;
  unsigned code = 0;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    min = 0x80;
    code = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    min = 0x800;
    code = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    min = 0x10000;
    code = c & 0x07;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    code = (code << 6) | (p[i] & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return n;
}

}  // namespace

void input_errors::fail(std::uint64_t offset, std::string problem) const {
  auto [line, column] = locate(offset);
  throw import_error(name_, std::move(problem), offset, line, column);
}

std::pair<std::uint64_t, std::uint64_t> input_errors::locate(std::uint64_t offset) const noexcept {
  try {
    auto source = reopen_();
    std::vector<char> chunk(std::size_t{1} << 20);
    std::uint64_t position = 0;
    std::uint64_t line = 1;
    std::uint64_t line_start = 0;
    while (position < offset) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), offset - position));
      const std::size_t got = source->read(chunk.data(), want);
      if (got == 0) break;
      const char* p = chunk.data();
      const char* const e = p + got;
      while (const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(e - p))) {
        p = static_cast<const char*>(nl) + 1;
        ++line;
        line_start = position + static_cast<std::uint64_t>(p - chunk.data());
      }
      position += got;
    }
    if (position < offset) return {0, 0};  // not readable again (a pipe): the offset alone
    return {line, offset - line_start + 1};
  } catch (...) {
    return {0, 0};
  }
}

std::string quote_text(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (text.size() > 80) out += "...";
  return out + "'";
}

std::string describe_byte(int c) {
  if (c < 0) return "the end of the input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%02x", c);
  return std::string("byte ") + hex;
}

text_problem find_text_problem(const char* begin, const char* end) {
  bool in_string = false;
  const char* string_start = nullptr;
  for (const char* p = begin; p < end;) {
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(reinterpret_cast<const unsigned char*>(p),
                                           reinterpret_cast<const unsigned char*>(end));
      if (n == 0) return {p, "invalid UTF-8 byte sequence"};
      p += n;
      continue;
    }
    if (in_string) {
      if (c == '\\') {
        p += 2;
        continue;
      }
      if (c == '"') in_string = false;
      else if (c < 0x20) return {p, "unescaped control character " + describe_byte(c) + " inside a string"};
    } else if (c == '"') {
      in_string = true;
      string_start = p;
    }
    ++p;
  }
  if (in_string) return {string_start, "unterminated string"};
  return {};
}

}  // namespace regionprof::import_detail
