// The activity buffers CUPTI writes records into.
//
// One block is mapped when a session starts (before the first measured run: a buffer allocated inside a
// measured run would distort it) and carved into equal buffers. CUPTI's buffer-requested callback takes a
// free buffer, or none once all are in use (CUPTI then drops records and counts them); its
// buffer-completed callback queues the buffer for decoding at the end of the session. Nothing is decoded
// while the program runs, so collection steals no CPU from it.
//
// The pool is a process-wide singleton that is never destroyed, because CUPTI's callbacks are global
// C functions that may run on CUPTI's own thread until CUPTI is done with the last buffer. One session at
// a time may be attached. Lock order: the pool's mutex is a leaf; it is never held while calling CUPTI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "regionprof/collect/cupti_records.hpp"

namespace regionprof::collect {

/// A buffer CUPTI handed back: `valid_bytes` of records from `data`.
struct completed_buffer {
  const std::uint8_t* data = nullptr;
  std::size_t valid_bytes = 0;
};

/// Unmaps the pool's block.
struct block_unmapper {
  std::size_t bytes = 0;
  void operator()(std::uint8_t* block) const noexcept;
};
using pool_block = std::unique_ptr<std::uint8_t, block_unmapper>;

/// Everything a detached pool returns to its session.
struct pool_harvest {
  pool_block block;                         ///< owns the completed buffers' memory (null if kept mapped)
  std::vector<completed_buffer> completed;  ///< in completion order
  std::size_t buffer_bytes = 0;
  std::size_t buffer_count = 0;
  std::uint64_t refused_requests = 0;       ///< requests answered with no buffer: the pool was exhausted
  std::uint64_t spilled_buffers = 0;        ///< spill buffers CUPTI filled while the pool was exhausted
  std::uint64_t spilled_records = 0;        ///< the records in them, discarded
  std::uint64_t foreign_completions = 0;    ///< completed buffers that were not the pool's (ignored)
  std::size_t outstanding = 0;              ///< buffers CUPTI never returned; their block stays mapped
};

class buffer_pool {
 public:
  /// The process's pool.
  static buffer_pool& instance();

  /// Maps `buffer_count` buffers of `buffer_bytes` (a multiple of 8) and pre-faults the first two.
  /// With `spill`, one more buffer is mapped and lent only when all others are in use, its records
  /// discarded and counted when CUPTI completes it: for a CUPTI that crashes when a request is refused
  /// (spill_needed()). Returns false, changing nothing, when another session is attached. Throws
  /// std::bad_alloc when the block cannot be mapped.
  bool attach(std::size_t buffer_bytes, std::size_t buffer_count, bool spill = false);
  /// Ends the attachment and hands over the completed buffers; requests get no buffer from now on.
  pool_harvest detach();
  /// Windows: the buffers completed so far, in completion order, while the pool stays attached; the
  /// caller decodes them and hands them back with recycle(). Empty when not attached.
  std::vector<completed_buffer> take_completed();
  /// Returns buffers take_completed() handed out to the free list (their records were copied out).
  void recycle(const std::vector<completed_buffer>& buffers);
  bool attached() const;

  /// CUPTI's buffer-requested callback. Never throws, never allocates.
  void on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept;
  /// What on_complete() did with a buffer.
  enum class completion : std::uint8_t {
    kept = 0,     ///< queued: records of the attached session
    spilled = 1,  ///< the spill buffer: its records are discarded (the caller counts them, add_spilled())
    ignored = 2,  ///< empty (reused), foreign, or completed twice
  };
  /// CUPTI's buffer-completed callback. Never throws, never allocates.
  completion on_complete(std::uint8_t* buffer, std::size_t valid_bytes) noexcept;
  /// Counts `records` discarded with a completed spill buffer.
  void add_spilled(std::uint64_t records) noexcept;

 private:
  buffer_pool() = default;

  mutable std::mutex mutex_;
  bool attached_ = false;
  pool_block block_;
  std::size_t buffer_bytes_ = 0;
  std::size_t buffer_count_ = 0;
  std::vector<std::uint32_t> free_;       // indices of free buffers (capacity: buffer_count_)
  std::vector<completed_buffer> completed_;  // capacity: buffer_count_
  std::size_t lent_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t foreign_ = 0;
  bool spill_ = false;       // a spill buffer follows the buffer_count_ buffers
  bool spill_lent_ = false;
  std::uint64_t spilled_buffers_ = 0;
  std::uint64_t spilled_records_ = 0;
};

/// Whether CUPTI `api_version` (cuptiGetVersion) must never be refused a buffer: activity API versions
/// before 27 crash when the buffer-requested callback returns none, so the pool spills instead. An
/// unknown version (0) is treated as one of those.
bool spill_needed(std::uint32_t api_version) noexcept;

/// The callbacks registered with cuptiActivityRegisterCallbacks. Test backends call them exactly as
/// CUPTI does, so tests exercise the same buffer path. A completed buffer's kernel names are copied at
/// once (kernel_names.hpp).
void CUPTIAPI cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
void CUPTIAPI cupti_buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                                     std::size_t size, std::size_t valid_size);

}  // namespace regionprof::collect
