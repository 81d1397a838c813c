// Copies of kernel names, taken when CUPTI completes a buffer.
//
// A kernel record points at a name CUPTI owns; the decode runs when the session stops, which for an
// injected program is at exit, possibly after the CUDA runtime unloaded its modules. So the names of a
// buffer's kernel records are copied in the buffer-completed callback, while they are certainly valid,
// and the decoder reads the copies. Keyed by pointer (CUPTI shares one name per kernel); a pointer reused
// by another module within one session would show the newer name for older records (not seen in practice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace regionprof::collect {

class kernel_names {
 public:
  /// The process's copies (never destroyed: CUPTI may call back late).
  static kernel_names& instance();

  /// Copies the names of the kernel records in a completed buffer. Called from CUPTI's callback: never
  /// throws, walks with CUPTI's walker without holding the lock, then copies only names not yet held.
  void capture(const std::uint8_t* buffer, std::size_t valid_bytes) noexcept;
  /// The copy for a record's name pointer; nullptr when none was captured.
  const std::string* find(const char* name) const;
  /// Forgets every copy (a session's decode is done).
  void clear();

 private:
  kernel_names() = default;
  mutable std::mutex mutex_;  // a leaf lock; never held while calling CUPTI
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace regionprof::collect
