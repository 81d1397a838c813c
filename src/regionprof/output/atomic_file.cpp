// write_file_atomically: a temporary beside the target, written through a checked file descriptor,
// fsync'd and renamed over the target. The one place regionprof creates a file it hands to a user.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>

#include "regionprof/output/output.hpp"

namespace regionprof {
namespace {

/// A buffered stream over a file descriptor that remembers the errno of the first failed write, so that
/// a full disk is reported as such (std::ofstream loses the reason).
class descriptor_buffer final : public std::streambuf {
 public:
  explicit descriptor_buffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const noexcept { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* at = pbase();
    while (error_ == 0 && at < pptr()) {
      const ssize_t written = ::write(fd_, at, static_cast<std::size_t>(pptr() - at));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error_ = written < 0 ? errno : EIO;
        break;
      }
      at += written;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// `.NAME.regionprof-PID-N.tmp` beside the target: hidden, and unique across the threads and processes
/// that write into one directory.
std::string temporary_beside(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const std::size_t slash = path.rfind('/');
  const std::string head = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return head + "." + name + ".regionprof-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
}

/// Removes the temporary unless the rename made it the target.
struct temporary_file {
  std::string path;
  int fd = -1;
  bool renamed = false;
  ~temporary_file() {
    if (fd >= 0) ::close(fd);
    if (!renamed) ::unlink(path.c_str());
  }
};

std::string message_of(const std::string& path, std::string_view what, const std::string& reason) {
  const std::string target = path.empty() ? "standard output" : "'" + path + "'";
  return "cannot write " + (what.empty() ? "" : "the " + std::string(what) + " to ") + target + ": " + reason;
}

}  // namespace

output_error::output_error(std::string path, std::string_view what, std::string reason, int error_number)
    : std::runtime_error(message_of(path, what, reason)), path_(std::move(path)), reason_(std::move(reason)),
      error_number_(error_number) {}

void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write) {
  const auto fail = [&](const std::string& why, int error) { return output_error(path, what, why, error); };
  const auto fail_errno = [&](int error) { return fail(std::strerror(error), error); };
  const std::string directory = directory_of(path);
  struct stat existing {};
  const bool exists = ::stat(path.c_str(), &existing) == 0;
  if (path.empty() || path.back() == '/' || (exists && S_ISDIR(existing.st_mode))) throw fail("it is a directory", EISDIR);
  if (exists && !S_ISREG(existing.st_mode)) {
    // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written in place: a file renamed over
    // it would replace the node itself (for root, /dev/null of the whole machine).
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw fail_errno(errno);
    descriptor_buffer buffer(fd);
    std::ostream out(&buffer);
    try {
      write(out);
      out.flush();
    } catch (const std::exception& e) {
      ::close(fd);
      throw buffer.error() != 0 ? fail_errno(buffer.error()) : fail(e.what(), 0);
    }
    const int error = buffer.error();
    if (::close(fd) != 0 && error == 0) throw fail_errno(errno);
    if (error != 0) throw fail_errno(error);
    return;
  }

  temporary_file temporary{temporary_beside(path)};
  temporary.fd = ::open(temporary.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (temporary.fd < 0) {
    const int error = errno;
    temporary.renamed = true;  // nothing was created
    struct stat dir {};
    if (::stat(directory.c_str(), &dir) != 0) {
      const int missing = errno;
      throw fail("directory '" + directory + "' does not exist", missing);
    }
    if (!S_ISDIR(dir.st_mode)) throw fail("directory '" + directory + "' does not exist", ENOTDIR);
    throw fail("cannot create a file in directory '" + directory + "': " + std::strerror(error), error);
  }
  if (exists && S_ISREG(existing.st_mode)) ::fchmod(temporary.fd, existing.st_mode & 07777);

  descriptor_buffer buffer(temporary.fd);
  {
    std::ostream out(&buffer);
    try {
      write(out);
    } catch (const std::exception& e) {
      if (buffer.error() != 0) throw fail_errno(buffer.error());
      throw fail(e.what(), 0);
    }
    out.flush();
    if (buffer.error() != 0) throw fail_errno(buffer.error());
    if (!out) throw fail("the writer failed", 0);
  }
  if (::fsync(temporary.fd) != 0) throw fail_errno(errno);
  const int fd = temporary.fd;
  temporary.fd = -1;
  if (::close(fd) != 0) throw fail_errno(errno);
  if (::rename(temporary.path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    throw fail("cannot rename '" + temporary.path + "' over it: " + std::strerror(error), error);
  }
  temporary.renamed = true;
  // The rename itself survives a crash of the machine once the directory is synced (best effort).
  if (const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace regionprof
