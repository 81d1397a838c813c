// The capture tool's process-wide state and its hot path (DESIGN.md, Hot path).
//
// Records: every NVTX event appends one 16-byte record to the calling thread's current chunk (64 KiB,
// 4094 records after a 32-byte header). No lock, no allocation, no string copy for registered names;
// one load of `active_epoch` when not recording.
//
// Ownership (no record is read while it is written):
// - A thread owns its current chunk and publishes each record with a release store of `chunk::used`.
// - A full chunk, and the current chunk of an exiting thread, is pushed onto `handover` (a lock-free
//   stack); from then on only the collector (capture_session::stop) touches it, and returns it to the
//   pool once converted.
// - stop() copies the published prefix of each live thread's current chunk (the thread keeps writing
//   beyond it); a thread resets its chunk only when it first records in a later session, which cannot
//   begin before stop() has returned.
// Lock order: registry.mutex, then pool_mutex; strings.mutex and domains.mutex are leaves. No lock is
// held while calling into NVTX or user code.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/capture_clock.hpp"

namespace regionprof::capture_detail {

enum class record_kind : std::uint8_t { push = 1, pop = 2, start = 3, end = 4, mark = 5 };

/// One NVTX event. For `end`, the 56-bit range id is split over name (bits 0-31), domain (32-47) and
/// extra (48-55); the end's own domain is not kept (the start's is).
struct record {
  std::uint64_t ticks;
  std::uint32_t name;     ///< string id (global registry); 0 is the empty name
  std::uint16_t domain;   ///< domain id (global registry); 0 is the default domain
  record_kind kind;
  std::uint8_t extra;
};
static_assert(sizeof(record) == 16, "a capture record is 16 bytes (DESIGN.md budget)");

inline constexpr std::size_t chunk_bytes = std::size_t{64} * 1024;
inline constexpr std::uint32_t records_per_chunk = (chunk_bytes - 32) / sizeof(record);  // 4094

/// Range ids: (chunk serial << 12) | index of the start record in its chunk, so a start record needs no
/// id field. 0: started while not recording; 1: the start was dropped at the memory cap.
inline constexpr std::uint64_t range_id_not_recorded = 0;
inline constexpr std::uint64_t range_id_dropped = 1;
inline constexpr unsigned range_id_index_bits = 12;
static_assert(records_per_chunk < (1u << range_id_index_bits));

struct chunk {
  chunk* next = nullptr;                  ///< link in `handover` or the pool
  std::uint64_t thread_serial = 0;        ///< owner (thread_info::serial)
  std::uint32_t serial = 0;               ///< process-unique, increasing per thread; see range ids
  std::atomic<std::uint32_t> epoch{0};    ///< session its records belong to
  std::atomic<std::uint32_t> used{0};     ///< records published (release by the owner)
  std::uint32_t reserved = 0;
  record records[records_per_chunk];
};
static_assert(sizeof(chunk) == chunk_bytes, "a chunk is exactly 64 KiB: 32-byte header + 4094 records");

/// Thread-local cache of unregistered names, keyed by content hash (never by pointer: callers reuse
/// buffers). Direct-mapped; a hit is verified by length and bytes.
struct name_cache_entry {
  std::uint64_t hash = 0;
  const char* text = "";  ///< the registry's copy (stable)
  std::uint32_t length = 0;
  std::uint32_t id = 0;
};
inline constexpr std::size_t name_cache_size = 256;

/// Per-thread recording state. Fields above `cache` are the hot path's and share one cache line.
struct thread_buffer {
  chunk* current = nullptr;          ///< owner's view of current_published
  std::uint32_t epoch = 0;           ///< session `current` records for; 0: none yet
  std::uint32_t used = 0;            ///< owner's copy of current->used
  bool over_cap = false;             ///< this epoch hit the memory cap: every record is dropped
  std::atomic<chunk*> current_published{nullptr};  ///< read by the collector under registry.mutex
  std::atomic<std::uint32_t> over_cap_epoch{0};    ///< last epoch that hit the cap (for the collector)
  std::uint64_t serial = 0;
  std::int64_t tid = 0;
  name_cache_entry cache[name_cache_size];
};

/// What the collector knows of a thread, alive or exited.
struct thread_info {
  std::uint64_t serial = 0;
  std::int64_t tid = 0;
  std::string name;                   ///< name at registration; at exit for exited threads
  pthread_t handle{};                 ///< to read a live thread's current name
  std::uint32_t over_cap_epoch = 0;   ///< copied from the buffer at exit
  thread_buffer* buffer = nullptr;    ///< nullptr once exited
};

/// Interned strings: content -> id, ids never reused. Ids fit a record's name field.
class string_registry {
 public:
  string_registry();
  /// The id of `text` and the registry's stable, NUL-terminated copy of it.
  std::pair<std::uint32_t, const char*> intern(std::string_view text);
  /// How many ids have been given out.
  std::size_t size();
  /// Copies of the texts of `ids` (one lock).
  void texts_of(const std::vector<std::uint32_t>& ids, std::vector<std::string>& out);

 private:
  std::mutex mutex_;
  std::deque<std::string> storage_;  // stable element addresses
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

/// Domains: name -> id (0: the default domain). Ids fit a record's domain field.
class domain_registry {
 public:
  domain_registry();
  /// The id of domain `name`; past 65535 domains, the last id is reused (counted in overflowed()).
  std::uint16_t create(std::string_view name);
  std::vector<std::string> names();
  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint16_t> index_;
  std::atomic<std::uint64_t> overflowed_{0};
};

/// The threads that have recorded, and thread names given through nvtxNameOsThread.
struct thread_registry {
  std::mutex mutex;
  std::vector<thread_info> threads;
  std::unordered_map<std::int64_t, std::string> nvtx_names;  ///< tid -> name from NVTX
  std::uint64_t next_serial = 1;
};

/// Process-wide state of this copy of the tool. Created on first use and never destroyed, so NVTX
/// calls from static destructors and exiting threads stay safe.
struct tool_state {
  string_registry strings;
  domain_registry domains;
  thread_registry registry;

  std::atomic<chunk*> handover{nullptr};  ///< lock-free stack of full chunks and exited threads' chunks
  std::mutex pool_mutex;
  std::vector<chunk*> pool;               ///< free chunks, reused across sessions (capped)

  std::atomic<std::uint32_t> next_chunk_serial{1};
  std::atomic<std::size_t> session_bytes{0};   ///< chunk memory taken by the active session
  std::atomic<std::size_t> session_cap{0};     ///< the active session's memory cap
  std::atomic<std::uint64_t> dropped{0};       ///< records dropped by the active session
  std::atomic<bool> attached{false};
  std::atomic<bool> session_open{false};       ///< a capture_session exists (one at a time)
  std::uint32_t last_epoch = 0;                ///< guarded by session_open
  clock_sample session_start;                  ///< guarded by session_open
};

tool_state& state() noexcept;

/// Non-zero while recording: the active session's epoch (stored with release). The hot path returns after
/// one relaxed load of it when it is 0; prepare() issues an acquire fence otherwise (no instruction on
/// x86), so what the session wrote before publishing the epoch (clock choice, cap) is visible.
extern std::atomic<std::uint32_t> active_epoch;
/// The calling thread's buffer (nullptr until it first records). Initial-exec TLS: one fs-relative load,
/// also in the injected shared library (8 bytes of static TLS).
/// (`__thread`, not thread_local: no TLS wrapper call when another translation unit reads it.)
extern __thread thread_buffer* this_thread_buffer __attribute__((tls_model("initial-exec")));

/// Slow path: the calling thread's buffer ready to append one record in `epoch` (registers the thread,
/// starts its chunk for this session, or hands over a full chunk and takes a new one). nullptr when the
/// record must be dropped (memory cap, or the session ended meanwhile); the drop is counted here.
thread_buffer* prepare_slow(std::uint32_t epoch) noexcept;

/// The calling thread's buffer ready to append in `epoch` (read relaxed, non-zero), or nullptr (dropped
/// and counted).
inline thread_buffer* prepare(std::uint32_t epoch) noexcept {
  std::atomic_thread_fence(std::memory_order_acquire);  // pairs with the session's release of the epoch
  thread_buffer* buffer = this_thread_buffer;
  if (buffer != nullptr && buffer->epoch == epoch && buffer->used < records_per_chunk) [[likely]] {
    return buffer;
  }
  return prepare_slow(epoch);
}

/// Appends a record to a buffer that prepare() returned; returns its index in the current chunk.
inline std::uint32_t append(thread_buffer* buffer, const record& r) noexcept {
  const std::uint32_t index = buffer->used;
  buffer->current->records[index] = r;
  buffer->used = index + 1;
  buffer->current->used.store(index + 1, std::memory_order_release);
  return index;
}

/// The id of an unregistered name, through the thread's cache (content hash) in front of the registry.
std::uint32_t intern_cached(thread_buffer* buffer, const char* text, std::size_t length) noexcept;

/// Hands a chunk to the collector (lock-free push).
void hand_over(chunk* c) noexcept;

/// Returns chunks to the pool (or frees them past the pool's cap). Collector only.
void release_chunks(const std::vector<chunk*>& chunks) noexcept;

}  // namespace regionprof::capture_detail
