#include "regionprof/collect/buffer_pool.hpp"

#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/collect/kernel_names.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace regionprof::collect {

void block_unmapper::operator()(std::uint8_t* block) const noexcept {
  if (block != nullptr) munmap(block, bytes);
}

buffer_pool& buffer_pool::instance() {
  // Never destroyed: CUPTI may call back after static destructors have run.
  static buffer_pool* const pool = new buffer_pool();
  return *pool;
}

bool spill_needed(std::uint32_t api_version) noexcept { return api_version < 27; }

bool buffer_pool::attach(std::size_t buffer_bytes, std::size_t buffer_count, bool spill) {
  std::lock_guard lock(mutex_);
  if (attached_) return false;
  const std::size_t total = buffer_bytes * (buffer_count + (spill ? 1 : 0));
  // MAP_NORESERVE: untouched buffers cost address space only.
  void* address = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (address == MAP_FAILED) throw std::bad_alloc();
  pool_block block(static_cast<std::uint8_t*>(address), block_unmapper{total});
  std::vector<std::uint32_t> free_list;
  std::vector<completed_buffer> completed;
  free_list.reserve(buffer_count);
  completed.reserve(buffer_count);
  // Handed out from the back: buffer 0 first, then 1, ...
  for (std::size_t i = buffer_count; i-- > 0;) free_list.push_back(static_cast<std::uint32_t>(i));
  // Pre-fault the buffers CUPTI takes first, so their page faults happen now and not in a measured run.
  std::memset(block.get(), 0, buffer_bytes * std::min<std::size_t>(buffer_count, 2));

  block_ = std::move(block);
  buffer_bytes_ = buffer_bytes;
  buffer_count_ = buffer_count;
  free_ = std::move(free_list);
  completed_ = std::move(completed);
  lent_ = 0;
  refused_ = 0;
  foreign_ = 0;
  spill_ = spill;
  spill_lent_ = false;
  spilled_buffers_ = 0;
  spilled_records_ = 0;
  attached_ = true;
  return true;
}

pool_harvest buffer_pool::detach() {
  std::lock_guard lock(mutex_);
  pool_harvest harvest;
  if (!attached_) return harvest;
  attached_ = false;
  harvest.buffer_bytes = buffer_bytes_;
  harvest.buffer_count = buffer_count_;
  harvest.refused_requests = refused_;
  harvest.foreign_completions = foreign_;
  harvest.spilled_buffers = spilled_buffers_;
  harvest.spilled_records = spilled_records_;
  harvest.outstanding = lent_;
  harvest.completed = std::move(completed_);
  if (lent_ == 0) {
    harvest.block = std::move(block_);
  } else {
    // CUPTI still holds buffers of this block and may write them: keep it mapped for the process's life.
    // The completed buffers stay readable through it.
    (void)block_.release();
  }
  block_.reset();
  free_.clear();
  completed_.clear();
  lent_ = 0;
  return harvest;
}

std::vector<completed_buffer> buffer_pool::take_completed() {
  std::lock_guard lock(mutex_);
  std::vector<completed_buffer> taken;
  if (!attached_) return taken;
  taken.reserve(buffer_count_);  // outside a CUPTI callback: allocating is fine here
  taken.swap(completed_);        // completed_ keeps a capacity of buffer_count_
  return taken;
}

void buffer_pool::recycle(const std::vector<completed_buffer>& buffers) {
  std::lock_guard lock(mutex_);
  if (!attached_ || block_ == nullptr) return;
  const std::uint8_t* base = block_.get();
  for (const completed_buffer& buffer : buffers) {
    const std::size_t offset = static_cast<std::size_t>(buffer.data - base);
    if (buffer.data < base || offset >= buffer_count_ * buffer_bytes_ || offset % buffer_bytes_ != 0) continue;
    if (free_.size() < free_.capacity()) free_.push_back(static_cast<std::uint32_t>(offset / buffer_bytes_));
  }
}

bool buffer_pool::attached() const {
  std::lock_guard lock(mutex_);
  return attached_;
}

void buffer_pool::on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // as many records as fit
  std::lock_guard lock(mutex_);
  if (!attached_) return;
  if (free_.empty()) {
    if (!spill_ || spill_lent_) {
      ++refused_;
      return;
    }
    // A CUPTI that must not be refused gets the spill buffer; what it writes there is counted, not kept.
    spill_lent_ = true;
    ++lent_;
    *buffer = block_.get() + buffer_count_ * buffer_bytes_;
    *size = buffer_bytes_;
    return;
  }
  const std::uint32_t index = free_.back();
  free_.pop_back();
  ++lent_;
  *buffer = block_.get() + static_cast<std::size_t>(index) * buffer_bytes_;
  *size = buffer_bytes_;
}

buffer_pool::completion buffer_pool::on_complete(std::uint8_t* buffer, std::size_t valid_bytes) noexcept {
  std::lock_guard lock(mutex_);
  if (!attached_ || buffer == nullptr || block_ == nullptr) {
    ++foreign_;
    return completion::ignored;
  }
  const std::uint8_t* base = block_.get();
  const std::uint8_t* spill = base + buffer_count_ * buffer_bytes_;
  if (spill_ && buffer == spill && spill_lent_) {
    spill_lent_ = false;  // free for the next request that finds the pool exhausted
    if (lent_ > 0) --lent_;
    if (valid_bytes == 0) return completion::ignored;
    ++spilled_buffers_;
    return completion::spilled;
  }
  if (buffer < base || buffer >= spill || static_cast<std::size_t>(buffer - base) % buffer_bytes_ != 0) {
    ++foreign_;
    return completion::ignored;
  }
  if (lent_ > 0) --lent_;
  if (valid_bytes == 0) {
    // Nothing in it: reuse it. Capacity was reserved for every buffer, so this never allocates.
    free_.push_back(static_cast<std::uint32_t>(static_cast<std::size_t>(buffer - base) / buffer_bytes_));
    return completion::ignored;
  }
  if (completed_.size() == completed_.capacity()) {  // a buffer completed twice: never grow in a callback
    ++foreign_;
    return completion::ignored;
  }
  completed_.push_back({buffer, valid_bytes < buffer_bytes_ ? valid_bytes : buffer_bytes_});
  return completion::kept;
}

void buffer_pool::add_spilled(std::uint64_t records) noexcept {
  std::lock_guard lock(mutex_);
  spilled_records_ += records;
}

void CUPTIAPI cupti_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  buffer_pool::instance().on_request(buffer, size, max_records);
}

void CUPTIAPI cupti_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t size,
                                     std::size_t valid_size) {
  buffer_pool& pool = buffer_pool::instance();
  switch (pool.on_complete(buffer, valid_size)) {
    case buffer_pool::completion::kept:
      kernel_names::instance().capture(buffer, std::min(valid_size, size));
      return;
    case buffer_pool::completion::spilled: {
      // Count what is discarded with CUPTI's walker, outside the pool's lock.
      const cupti_library& cupti = process_cupti();
      std::uint64_t records = 0;
      CUpti_Activity* record = nullptr;
      const std::size_t valid = std::min(valid_size, size);
      while (cupti.loaded() &&
             REGIONPROF_CUPTI(cupti, cuptiActivityGetNextRecord, buffer, valid, &record).ok()) {
        ++records;
      }
      pool.add_spilled(records);
      return;
    }
    case buffer_pool::completion::ignored: return;
  }
}

}  // namespace regionprof::collect
