#include "regionprof/import/input_window.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace regionprof::import_detail {

window_reader::window_reader(byte_source& source, std::size_t buffer_bytes) : source_(source) {
  mapping_ = source.map(1 + sj_padding);
  if (mapping_) {
    base_ = mapping_->data() - 1;
    end_ = 1 + mapping_->size();
    exhausted_ = true;
  } else {
    allocate(buffer_bytes);
  }
}

void window_reader::ensure(std::size_t want) {
  if (mapping_) {
    mapping_->release_before(begin() - 1);
    return;
  }
  if (end_ - begin_ >= want || exhausted_) return;
  const std::size_t kept = end_ - begin_;
  if (want > capacity_) {
    auto old = std::move(buffer_);
    const char* old_begin = old.get() + begin_;
    allocate(std::max(want, capacity_ * 2));
    std::memcpy(base_ + 1, old_begin, kept);
  } else if (begin_ != 1 && kept != 0) {
    std::memmove(base_ + 1, begin(), kept);
  }
  begin_ = 1;
  end_ = 1 + kept;
  while (!exhausted_ && end_ < 1 + capacity_) {
    const std::size_t got = source_.read(base_ + end_, 1 + capacity_ - end_);
    if (got == 0) exhausted_ = true;
    end_ += got;
  }
}

int window_reader::peek_nonspace() {
  for (;;) {
    char* p = begin();
    char* const e = end();
    while (p < e && is_space(static_cast<unsigned char>(*p))) ++p;
    consume_to(p);
    if (p < e) return static_cast<unsigned char>(*p);
    if (exhausted_) return -1;
    ensure(1);
  }
}

void window_reader::allocate(std::size_t capacity) {
  capacity_ = capacity;
  // spare '[' + data + ']' + padding
  buffer_ = std::make_unique_for_overwrite<char[]>(1 + capacity + 1 + sj_padding);
  base_ = buffer_.get();
  begin_ = end_ = 1;
}

char* choose_cut(char* begin, char* end) noexcept {
  const auto size = static_cast<std::size_t>(end - begin);
  if (const void* nl = memrchr(begin, '\n', size)) {
    char* cut = static_cast<char*>(const_cast<void*>(nl)) + 1;
    if (static_cast<std::size_t>(cut - begin) >= size / 2) return cut;
  }
  // Newline-free: the whole window is tried. A cut inside a string (a multi-byte UTF-8 sequence can
  // only be in one) makes stage 1 report the unclosed string first; parse_window then cuts before
  // that string's opening quote.
  return end;
}

const char* last_unescaped_quote(const char* begin, const char* end) noexcept {
  const char* p = end;
  while (p > begin) {
    const void* found = memrchr(begin, '"', static_cast<std::size_t>(p - begin));
    if (found == nullptr) return nullptr;
    const char* quote = static_cast<const char*>(found);
    std::size_t backslashes = 0;
    for (const char* b = quote; b > begin && b[-1] == '\\'; --b) ++backslashes;
    if (backslashes % 2 == 0) return quote;
    p = quote;
  }
  return nullptr;
}

}  // namespace regionprof::import_detail
