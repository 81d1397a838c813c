#include "regionprof/import/byte_source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "regionprof/import/import.hpp"

namespace regionprof::import_detail {
namespace {

constexpr unsigned char gzip_magic0 = 0x1f;
constexpr unsigned char gzip_magic1 = 0x8b;

bool starts_with_gzip_magic(const unsigned char* bytes, std::size_t size) {
  return size >= 2 && bytes[0] == gzip_magic0 && bytes[1] == gzip_magic1;
}

}  // namespace

file_mapping::~file_mapping() { ::munmap(region_, region_size_); }

void file_mapping::release_before(const char* p) noexcept {
  static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto end = static_cast<std::size_t>(p - data_) / page * page;
  if (end <= released_ + (std::size_t{4} << 20)) return;  // in steps of at least 4 MiB
  ::madvise(data_ + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

class file_source final : public byte_source {
 public:
  explicit file_source(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw import_error(path_, std::string("cannot open: ") + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd_, &info) == 0 && S_ISDIR(info.st_mode)) {
      ::close(fd_);
      throw import_error(path_, "is a directory, not a trace (a Chrome trace JSON file, plain or gzip)");
    }
  }
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  ~file_source() override { ::close(fd_); }

  std::size_t read(char* out, std::size_t size) override {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t got = ::read(fd_, out + done, size - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw import_error(path_, std::string("cannot read: ") + std::strerror(errno));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  std::unique_ptr<file_mapping> map(std::size_t after) override {
    struct stat info {};
    if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0) return nullptr;
    const auto size = static_cast<std::size_t>(info.st_size);
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const auto round_up = [page](std::size_t n) { return (n + page - 1) / page * page; };
    // One anonymous page before the file (for data()[-1]) and anonymous pages after it.
    const std::size_t region_size = page + round_up(size) + round_up(after + 1);
    void* region = ::mmap(nullptr, region_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return nullptr;
    char* data = static_cast<char*>(region) + page;
    if (::mmap(data, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd_, 0) == MAP_FAILED) {
      ::munmap(region, region_size);
      return nullptr;
    }
    ::madvise(data, size, MADV_SEQUENTIAL);
    return std::unique_ptr<file_mapping>(new file_mapping(static_cast<char*>(region), region_size, data, size));
  }

  /// The first bytes of the file without consuming them.
  std::size_t peek(unsigned char* out, std::size_t size) {
    for (;;) {
      const ssize_t got = ::pread(fd_, out, size, 0);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw import_error(path_, std::string("cannot read: ") + std::strerror(errno));
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

namespace {

class memory_source final : public byte_source {
 public:
  explicit memory_source(std::string_view bytes) : bytes_(bytes) {}
  std::size_t read(char* out, std::size_t size) override {
    const std::size_t n = std::min(size, bytes_.size() - position_);
    std::memcpy(out, bytes_.data() + position_, n);
    position_ += n;
    return n;
  }

 private:
  std::string_view bytes_;
  std::size_t position_ = 0;
};

/// Inflates a gzip stream (one or more members, as `cat a.gz b.gz` makes) read from `raw`.
/// Invariant: compressed_offset() = bytes taken from raw - bytes not yet given to inflate.
class gzip_source final : public byte_source {
 public:
  gzip_source(std::unique_ptr<byte_source> raw, std::string name)
      : raw_(std::move(raw)), name_(std::move(name)), input_(input_chunk) {
    // 16 + MAX_WBITS: a gzip wrapper only (the magic bytes said so).
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      throw import_error(name_, "cannot start gzip decompression (zlib out of memory)");
    }
  }
  gzip_source(const gzip_source&) = delete;
  gzip_source& operator=(const gzip_source&) = delete;
  ~gzip_source() override { inflateEnd(&stream_); }

  bool gzip() const noexcept override { return true; }

  std::size_t read(char* out, std::size_t size) override {
    if (size == 0) return 0;
    // zlib counts in uInt: read at most 1 GiB per call.
    const auto want = static_cast<uInt>(std::min<std::size_t>(size, std::size_t{1} << 30));
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = want;
    while (stream_.avail_out == want) {
      if (member_done_) {
        if (!ensure_input(2)) {
          if (stream_.avail_in == 0) return 0;  // the end of the last member is the end of the input
          fail_trailing();
        }
        if (!starts_with_gzip_magic(stream_.next_in, stream_.avail_in)) fail_trailing();
        inflateReset(&stream_);
        member_done_ = false;
      }
      if (stream_.avail_in == 0 && !ensure_input(1)) {
        throw import_error(name_, "truncated gzip stream: the compressed data ends at byte " +
                                      std::to_string(compressed_offset()) +
                                      " before the end of the stream (an incomplete download or copy?)");
      }
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw import_error(name_, std::string("corrupt gzip data near compressed byte ") +
                                      std::to_string(compressed_offset()) + ": " +
                                      (stream_.msg != nullptr ? stream_.msg : zError(rc)));
      }
    }
    return want - stream_.avail_out;
  }

 private:
  static constexpr std::size_t input_chunk = std::size_t{1} << 18;

  std::uint64_t compressed_offset() const noexcept { return taken_ - stream_.avail_in; }

  /// Makes at least `n` unread compressed bytes available (fewer only at the end of the input).
  bool ensure_input(std::size_t n) {
    if (stream_.avail_in >= n) return true;
    if (raw_done_) return false;
    // Keep the unread tail at the front, then fill the rest of the buffer.
    const std::size_t tail = stream_.avail_in;
    if (tail != 0) std::memmove(input_.data(), stream_.next_in, tail);
    const std::size_t got = raw_->read(reinterpret_cast<char*>(input_.data()) + tail, input_.size() - tail);
    if (got == 0) raw_done_ = true;
    taken_ += got;
    stream_.next_in = input_.data();
    stream_.avail_in = static_cast<uInt>(tail + got);
    return stream_.avail_in >= n;
  }

  [[noreturn]] void fail_trailing() {
    throw import_error(name_, "unexpected data after the end of the gzip stream at compressed byte " +
                                  std::to_string(compressed_offset()));
  }

  std::unique_ptr<byte_source> raw_;
  std::string name_;
  std::vector<Bytef> input_;
  z_stream stream_{};
  std::uint64_t taken_ = 0;
  bool raw_done_ = false;
  bool member_done_ = false;
};

/// Reads `inner` ahead on a thread of its own, a few blocks at a time, so that inflating a gzip
/// input overlaps parsing it: the import then takes about max(inflate, parse), not their sum.
/// An exception of the reading thread is rethrown by read(), in order.
/// Lock order: only mutex_; inner->read() runs unlocked, on the reading thread only.
class prefetching_source final : public byte_source {
 public:
  explicit prefetching_source(std::unique_ptr<byte_source> inner) : inner_(std::move(inner)) {
    for (auto& block : blocks_) block.data.resize(block_bytes);
    for (std::size_t i = 0; i < blocks_.size(); ++i) free_.push_back(i);
    reader_ = std::thread([this] { produce(); });
  }
  prefetching_source(const prefetching_source&) = delete;
  prefetching_source& operator=(const prefetching_source&) = delete;
  ~prefetching_source() override {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    reader_.join();
  }

  bool gzip() const noexcept override { return inner_->gzip(); }

  std::size_t read(char* out, std::size_t size) override {
    if (size == 0) return 0;
    if (!current_) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return !filled_.empty() || finished_; });
      if (filled_.empty()) {
        if (error_) std::rethrow_exception(error_);
        return 0;
      }
      current_ = filled_.front();
      filled_.pop_front();
      position_ = 0;
    }
    chunk& b = blocks_[*current_];
    const std::size_t n = std::min(size, b.size - position_);
    std::memcpy(out, b.data.data() + position_, n);
    position_ += n;
    if (position_ == b.size) {
      {
        const std::lock_guard lock(mutex_);
        free_.push_back(*current_);
      }
      current_.reset();
      changed_.notify_all();
    }
    return n;
  }

 private:
  static constexpr std::size_t block_bytes = std::size_t{4} << 20;

  struct chunk {
    std::vector<char> data;
    std::size_t size = 0;
  };

  void produce() {
    try {
      for (;;) {
        std::size_t index = 0;
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [this] { return !free_.empty() || stopping_; });
          if (stopping_) break;
          index = free_.front();
          free_.pop_front();
        }
        chunk& b = blocks_[index];
        b.size = 0;
        while (b.size < b.data.size()) {
          const std::size_t got = inner_->read(b.data.data() + b.size, b.data.size() - b.size);
          if (got == 0) break;
          b.size += got;
        }
        const std::lock_guard lock(mutex_);
        if (b.size == 0) break;
        filled_.push_back(index);
        changed_.notify_all();
      }
    } catch (...) {
      const std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      finished_ = true;
    }
    changed_.notify_all();
  }

  std::unique_ptr<byte_source> inner_;
  std::array<chunk, 3> blocks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::size_t> free_;    // guarded by mutex_
  std::deque<std::size_t> filled_;  // guarded by mutex_, in input order
  bool stopping_ = false;           // guarded by mutex_
  bool finished_ = false;           // guarded by mutex_
  std::exception_ptr error_;        // guarded by mutex_
  std::optional<std::size_t> current_;  // consumer only
  std::size_t position_ = 0;            // consumer only
  std::thread reader_;
};

}  // namespace

std::unique_ptr<byte_source> open_file_source(const std::string& path) {
  auto file = std::make_unique<file_source>(path);
  unsigned char magic[2] = {0, 0};
  const std::size_t got = file->peek(magic, sizeof magic);
  if (starts_with_gzip_magic(magic, got)) {
    return std::make_unique<prefetching_source>(std::make_unique<gzip_source>(std::move(file), path));
  }
  return file;
}

std::unique_ptr<byte_source> open_memory_source(std::string_view bytes, const std::string& name) {
  auto memory = std::make_unique<memory_source>(bytes);
  if (starts_with_gzip_magic(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size())) {
    return std::make_unique<gzip_source>(std::move(memory), name);
  }
  return memory;
}

}  // namespace regionprof::import_detail
