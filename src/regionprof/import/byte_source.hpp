// Sequential byte sources for the importers: a file, bytes in memory, or either of them gunzipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace regionprof::import_detail {

/// A whole file mapped copy-on-write, with writable bytes before and after it (the importer writes
/// its window brackets and padding there). Pages are released behind the reader (release_before), so
/// the resident memory is a window, not the file. Like every mapped reader, it assumes the file is not
/// truncated while it is read (that would raise SIGBUS); traces are files written before analysis.
class file_mapping {
 public:
  file_mapping(const file_mapping&) = delete;
  file_mapping& operator=(const file_mapping&) = delete;
  ~file_mapping();

  /// data()[-1] and data()[size() .. size() + after) are writable; the file's bytes are private.
  char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  /// Gives back the pages entirely before `p` (they read back from the file if touched again).
  void release_before(const char* p) noexcept;

 private:
  friend class file_source;
  file_mapping(char* region, std::size_t region_size, char* data, std::size_t size)
      : region_(region), region_size_(region_size), data_(data), size_(size) {}
  char* region_;
  std::size_t region_size_;
  char* data_;
  std::size_t size_;
  std::size_t released_ = 0;
};

/// Yields the (decompressed) bytes of an input in order. Errors throw regionprof::import_error
/// naming the input.
class byte_source {
 public:
  virtual ~byte_source() = default;
  /// Reads up to `size` bytes into `out`; returns 0 only at the end of the input.
  virtual std::size_t read(char* out, std::size_t size) = 0;
  /// True when the bytes are the inflated content of a gzip stream.
  virtual bool gzip() const noexcept { return false; }
  /// The whole input mapped in memory with `after` writable bytes past its end, when the source is
  /// a plain regular file that can be mapped; else null (read() it instead).
  virtual std::unique_ptr<file_mapping> map(std::size_t /*after*/) { return nullptr; }
};

/// Opens `path` (gzip when it starts with the gzip magic 1f 8b, whatever its name).
std::unique_ptr<byte_source> open_file_source(const std::string& path);
/// Reads `bytes` (not copied: they must outlive the source), gunzipped when they start with 1f 8b.
std::unique_ptr<byte_source> open_memory_source(std::string_view bytes, const std::string& name);

}  // namespace regionprof::import_detail
