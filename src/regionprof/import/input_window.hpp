// The traceEvents windows: the unconsumed input in memory, and the points where a window may end.
// A window is the bytes [begin, cut) of the input, where `begin` is the first byte of an event and
// `cut` is a point outside any string; it is parsed as `[` + bytes + `]` with simdjson's padding after.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "regionprof/import/byte_source.hpp"

namespace regionprof::import_detail {

/// Blank bytes simdjson reads past a window's ']'.
inline constexpr std::size_t sj_padding = simdjson::SIMDJSON_PADDING;

/// JSON whitespace.
inline bool is_space(int c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/// The unconsumed input in memory: either the whole file mapped copy-on-write (plain files: no
/// copy; pages are released behind the reader) or a buffer refilled from a byte_source (gzip,
/// memory). Layout either way: base_[0] is a spare byte (room for a window's '[' prefix), the
/// unconsumed bytes are [begin_, end_), and at least 1 + padding writable bytes follow end_ (room
/// for a window's ']' suffix and simdjson's padding; in a mapped file they may be input bytes).
class window_reader {
 public:
  window_reader(byte_source& source, std::size_t buffer_bytes);

  char* begin() noexcept { return base_ + begin_; }
  char* end() noexcept { return base_ + end_; }
  /// True when end() is the end of the input.
  bool exhausted() const noexcept { return exhausted_; }
  /// Absolute input offset of `p` (a pointer into the unconsumed bytes or just past them).
  std::uint64_t offset_of(const char* p) const noexcept {
    return consumed_ + static_cast<std::uint64_t>(p - (base_ + begin_));
  }
  std::uint64_t offset() const noexcept { return consumed_; }

  void consume_to(const char* p) noexcept {
    consumed_ += static_cast<std::uint64_t>(p - begin());
    begin_ = static_cast<std::size_t>(p - base_);
  }
  void consume(std::size_t n) noexcept { consume_to(begin() + n); }

  /// Makes at least `want` unconsumed bytes available, or all that is left of the input.
  void ensure(std::size_t want);

  /// Skips whitespace; returns the next byte without consuming it, or -1 at the end of the input.
  int peek_nonspace();

  /// The next byte (not consumed), or -1 at the end of the input.
  int peek() {
    ensure(1);
    return begin_ == end_ ? -1 : static_cast<unsigned char>(base_[begin_]);
  }

  /// The next byte (consumed), or -1 at the end of the input.
  int next() {
    const int c = peek();
    if (c >= 0) consume(1);
    return c;
  }

 private:
  void allocate(std::size_t capacity);

  byte_source& source_;
  std::unique_ptr<file_mapping> mapping_;
  std::unique_ptr<char[]> buffer_;
  char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 1;
  std::size_t end_ = 1;
  std::uint64_t consumed_ = 0;  // absolute offset of base_[begin_]
  bool exhausted_ = false;
};

/// Writes the window's '[' prefix, ']' suffix and blank padding, and restores the bytes it covered.
class window_frame {
 public:
  /// The 1 + padding bytes from `cut` on must be writable (window_reader guarantees it); in a
  /// mapped file they may be input bytes beyond the window, so all of them are restored.
  window_frame(char* begin, char* cut) : cut_(cut) {
    std::memcpy(saved_.data(), cut, saved_.size());
    begin[-1] = '[';
    cut[0] = ']';
    std::memset(cut + 1, ' ', sj_padding);
  }
  window_frame(const window_frame&) = delete;
  window_frame& operator=(const window_frame&) = delete;
  ~window_frame() { std::memcpy(cut_, saved_.data(), saved_.size()); }

 private:
  char* cut_;
  std::array<char, 1 + sj_padding> saved_{};
};

/// A point in [begin, end) outside any string where the window may end, or end itself when the
/// window must be tried whole (newline-free JSON: the scanner then cuts before the opening quote
/// of the string that stage 1 reports unclosed, found by last_unescaped_quote).
char* choose_cut(char* begin, char* end) noexcept;

/// The last quote in [begin, end) that is not escaped (preceded by an even number of backslashes).
const char* last_unescaped_quote(const char* begin, const char* end) noexcept;

}  // namespace regionprof::import_detail
