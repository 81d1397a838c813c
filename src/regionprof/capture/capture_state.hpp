// The capture tool's process-wide state and its hot path (docs/design.md, "Hot path (capture)").
//
// Records: every NVTX event appends one 12-byte record to the calling thread's current chunk (64 KiB,
// 5458 records after a 40-byte header: 12.007 bytes per event), every memory event two records in the
// same chunk. No lock, no allocation, no string copy for registered names; one load of `active_epoch`
// when not recording.
//
// Ownership (no record is read while it is written):
// - A thread owns its current chunk and publishes each record with a release store of `chunk::used`.
// - A full chunk, a chunk whose tick base no longer reaches the thread's clock (see `record`), and the
//   current chunk of an exiting thread, is pushed onto `handover` (a lock-free stack); from then on only
//   the collector (capture_session::stop) touches it, and returns it to the pool once converted.
// - A replaced chunk is pushed onto `handover` before it stops being `current_published`, so a collector
//   (which reads every thread's current chunk, then drains the stack) always finds it in one place or the
//   other; it may find it in both, and then keeps the handed-over one. A collected chunk that is still
//   some live thread's `current_published` (its owner paused between the two steps) is pushed back onto
//   the stack instead of being reused or freed, so no published pointer ever dangles.
// - fork(): pthread_atfork handlers take every mutex of the tool (in lock order) around fork(), so the
//   child never inherits one held by a thread that does not exist there. In the child the other threads
//   are recorded as exited and their current chunks handed over: what they published before the fork
//   stays in the child's copy of the session.
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
#include <iterator>
#include <mutex>
#include <string>
#include <utility>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_clock.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::capture_detail {

enum class record_kind : std::uint8_t { push = 1, pop = 2, start = 3, end = 4, mark = 5, work = 6, memory = 7 };

/// One NVTX event in 12 bytes (alignment 4, so records pack with no padding):
///   packed (64 bits) = tick delta from the chunk's base (bits 0-44) | kind (45-47) | domain (48-63),
///   name (32 bits)   = string id (global registry; 0 is the empty name).
/// The domain is a domain id (global registry; 0 is the default domain). For `end`, the 48-bit range id
/// is split over name (id bits 0-31) and domain (id bits 32-47); the end's own domain is not kept (the
/// start's is).
///
/// Why a delta from a per-chunk base, not a delta from the previous record: a base lets every record be
/// decoded on its own (the collector copies a live chunk's published prefix and reads it in any order)
/// and needs one subtraction on the hot path; a delta from the previous record would add a load-store
/// dependency per record and make one bad record corrupt the rest of its chunk.
///
/// Range of a delta: 2^45 ticks. With the TSC at f GHz that is 2^45 / f ns: 9.8 h at 1 GHz, 3.3 h at
/// 3 GHz, 1.95 h at 5 GHz (the fastest invariant TSCs shipped); with the CLOCK_MONOTONIC fallback ticks
/// are ns: 9.8 h. A record whose delta does not fit (a thread idle that long, or a clock read below the
/// base) rebases: the thread hands its chunk over and takes a fresh one whose base is just below that
/// record's ticks (an empty chunk is rebased in place). The waste is bounded by one partly filled chunk
/// per thread per 2^45 ticks, and the data stays exact.
struct record {
  std::uint32_t packed_low;   ///< bits 0-31 of `packed`
  std::uint32_t packed_high;  ///< bits 32-63 of `packed`
  std::uint32_t name;

  std::uint64_t packed() const noexcept { return packed_low | (static_cast<std::uint64_t>(packed_high) << 32); }
  std::uint64_t tick_delta() const noexcept;
  record_kind kind() const noexcept { return static_cast<record_kind>((packed_high >> 13) & 0x7u); }
  std::uint16_t domain() const noexcept { return static_cast<std::uint16_t>(packed_high >> 16); }
};
static_assert(sizeof(record) == 12 && alignof(record) == 4, "a capture record is 12 bytes (docs/design.md, Budgets)");

inline constexpr unsigned tick_delta_bits = 45;
/// The largest tick delta a record holds; a larger one rebases the thread's chunk.
inline constexpr std::uint64_t max_tick_delta = (std::uint64_t{1} << tick_delta_bits) - 1;
/// A chunk's base is this many ticks below the clock read that starts it (or the record that rebases it),
/// so a later record that reads the clock a little lower still fits: a pop reads the clock before its
/// buffer may start a chunk, and a thread moved to another core may read a TSC a little behind. 2^30
/// ticks is 0.36 s at 3 GHz (cross-core TSC skew is at most microseconds) and costs 1/32 of the range.
inline constexpr std::uint64_t base_margin_ticks = std::uint64_t{1} << 30;

inline std::uint64_t record::tick_delta() const noexcept { return packed() & max_tick_delta; }

/// Declared work (docs/design.md, rule 18): a mark named `regionprof.work.<quantity>` with a numeric payload.
/// The record holds no time: it belongs to the innermost push range of its domain open on its thread.
/// Layout: value bits 0-44 in the tick-delta field, value bits 45-63 in name bits 0-18, the quantity
/// (work_quantity) in name bits 30-31; kind and domain as for any record.
///
/// work_quantity follows the order of regionprof::work_mark_names (capture.hpp), which the tool state
/// interns first, so that their ids are consecutive.
enum class work_quantity : std::uint8_t { bytes = 0, flops = 1, items = 2 };
inline constexpr std::size_t work_quantity_count = std::size(work_mark_names);

inline record make_work_record(work_quantity quantity, std::uint16_t domain, std::uint64_t value) noexcept {
  const std::uint64_t packed = (value & ((std::uint64_t{1} << 45) - 1)) |
                               (static_cast<std::uint64_t>(record_kind::work) << 45) |
                               (static_cast<std::uint64_t>(domain) << 48);
  const auto name = static_cast<std::uint32_t>(value >> 45) | (static_cast<std::uint32_t>(quantity) << 30);
  return {static_cast<std::uint32_t>(packed), static_cast<std::uint32_t>(packed >> 32), name};
}
inline std::uint64_t work_value(const record& r) noexcept {
  return (r.packed() & ((std::uint64_t{1} << 45) - 1)) | (static_cast<std::uint64_t>(r.name & 0x7FFFFu) << 45);
}
inline work_quantity work_quantity_of(const record& r) noexcept { return static_cast<work_quantity>(r.name >> 30); }

/// A memory event (docs/design.md, rule 21) in two records, both appended and published at once (one release
/// of `used`), so a collector never sees one without the other and a segment never splits them:
///   head:    kind `memory`, the tick delta as any record; domain field = memory event kind (bits 14-15) |
///            device + 1 (bits 0-13: cpu_memory is 0, CUDA ordinal N is N + 1); name = bytes bits 0-31;
///   payload: packed_low = bytes bits 32-63, packed_high = total bits 0-31, name = total bits 32-63.
/// 24 bytes per event. The payload's bits are not a record's: only the record before it says what it is.
inline constexpr std::uint32_t memory_event_records = 2;

struct memory_payload {
  std::int64_t bytes;
  std::int64_t total_allocated;
  memory_device device;  ///< cpu_memory .. max_memory_device (capture.hpp: 14 bits hold device + 1)
  memory_event_kind kind;
};

inline std::uint16_t memory_domain_field(memory_device device, memory_event_kind kind) noexcept {
  return static_cast<std::uint16_t>((static_cast<unsigned>(kind) << 14) | static_cast<unsigned>(device + 1));
}
inline record make_memory_payload_record(const memory_payload& m) noexcept {
  const auto bytes = static_cast<std::uint64_t>(m.bytes);
  const auto total = static_cast<std::uint64_t>(m.total_allocated);
  return {static_cast<std::uint32_t>(bytes >> 32), static_cast<std::uint32_t>(total),
          static_cast<std::uint32_t>(total >> 32)};
}
/// The event a head record and its payload record hold (its time aside).
inline memory_payload memory_payload_of(const record& head, const record& payload) noexcept {
  const std::uint16_t field = head.domain();
  return {static_cast<std::int64_t>(head.name | (static_cast<std::uint64_t>(payload.packed_low) << 32)),
          static_cast<std::int64_t>(payload.packed_high | (static_cast<std::uint64_t>(payload.name) << 32)),
          static_cast<memory_device>(static_cast<int>(field & 0x3FFFu) - 1),
          static_cast<memory_event_kind>(field >> 14)};
}

inline record make_record(std::uint64_t tick_delta, record_kind kind, std::uint16_t domain,
                          std::uint32_t name) noexcept {
  const std::uint64_t packed = tick_delta | (static_cast<std::uint64_t>(kind) << tick_delta_bits) |
                               (static_cast<std::uint64_t>(domain) << 48);
  return {static_cast<std::uint32_t>(packed), static_cast<std::uint32_t>(packed >> 32), name};
}

/// The base of a chunk that must hold a record read at `ticks` (see base_margin_ticks).
inline std::uint64_t base_for(std::uint64_t ticks) noexcept {
  return ticks > base_margin_ticks ? ticks - base_margin_ticks : 0;
}

inline constexpr std::size_t chunk_bytes = std::size_t{64} * 1024;
inline constexpr std::size_t chunk_header_bytes = 40;
/// (64 KiB - 40) / 12 = 5458 exactly: 64 KiB per 5458 records is 12.007 bytes per record.
inline constexpr std::uint32_t records_per_chunk = (chunk_bytes - chunk_header_bytes) / sizeof(record);

/// Range ids: (chunk serial << 13) | index of the start record in its chunk, so a start record needs no
/// id field. An end record holds 48 bits, so the id keeps the serial's low 35 bits: serials are 64-bit
/// and never wrap, and the ids of two chunks collide only 2^35 chunks (2 PiB of records) apart, while
/// ids are paired within one session (far fewer chunks). Serials whose low 35 bits are 0 are skipped,
/// so a real id is never 0 (started while not recording) or 1 (the start was dropped at the memory cap).
inline constexpr std::uint64_t range_id_not_recorded = 0;
inline constexpr std::uint64_t range_id_dropped = 1;
inline constexpr unsigned range_id_bits = 48;
inline constexpr unsigned range_id_index_bits = 13;
inline constexpr std::uint64_t range_id_serial_mask = (std::uint64_t{1} << (range_id_bits - range_id_index_bits)) - 1;
static_assert(records_per_chunk <= (1u << range_id_index_bits));

/// The id of the range started by record `index` of chunk `chunk_serial`.
inline std::uint64_t range_id(std::uint64_t chunk_serial, std::uint32_t index) noexcept {
  return ((chunk_serial & range_id_serial_mask) << range_id_index_bits) | index;
}

struct chunk {
  chunk* next = nullptr;                  ///< link in `handover` or the pool
  std::uint64_t thread_serial = 0;        ///< owner (thread_info::serial)
  std::uint64_t serial = 0;               ///< process-unique, increasing per thread; see range ids
  std::atomic<std::uint64_t> base{0};     ///< ticks of record i = base + its delta; written by the owner
                                          ///< before the release of the `used` that publishes a record
  std::atomic<std::uint32_t> epoch{0};    ///< session its records belong to
  std::atomic<std::uint32_t> used{0};     ///< records published (release by the owner)
  record records[records_per_chunk];
};
static_assert(offsetof(chunk, records) == chunk_header_bytes, "a chunk header is 40 bytes");
static_assert(sizeof(chunk) == chunk_bytes, "a chunk is exactly 64 KiB: 40-byte header + 5458 records");

/// Thread-local cache of unregistered names, keyed by content hash (never by pointer: callers reuse
/// buffers). Two-way set-associative, the set's most recent name first; a hit is verified by length
/// and bytes. A miss interns under the registry's lock, so names that evict each other cost a lock per
/// call: a BERT training step's 115 op names put 39 into shared slots of a 256-entry direct-mapped
/// cache (a third of its op calls), and one set of three here.
struct name_cache_entry {
  std::uint64_t hash = 0;
  const char* text = "";  ///< the registry's copy (stable)
  std::uint32_t length = 0;
  std::uint32_t id = 0;
};
inline constexpr std::size_t name_cache_ways = 2;
inline constexpr std::size_t name_cache_size = 1024;  ///< entries: 512 sets of 2 (24 KiB per thread)

/// Per-thread recording state. Fields above `cache` are the hot path's and share one cache line.
struct alignas(64) thread_buffer {
  chunk* current = nullptr;          ///< owner's view of current_published
  std::uint32_t epoch = 0;           ///< session `current` records for; 0: none yet
  std::uint32_t used = 0;            ///< owner's copy of current->used
  std::uint64_t base = 0;            ///< owner's copy of current->base
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

/// Interned strings shared by every thread: a regionprof::string_table behind a mutex. Content -> id,
/// ids never reused (0 is the empty string). Ids fit a record's name field.
class string_registry {
 public:
  /// The id of `text` and the registry's stable, NUL-terminated copy of it.
  std::pair<std::uint32_t, const char*> intern(std::string_view text);
  /// How many ids have been given out.
  std::size_t size();
  /// Copies of the texts of `ids` (one lock).
  void texts_of(const std::vector<std::uint32_t>& ids, std::vector<std::string>& out);
  /// Around fork() only (see state()).
  std::mutex& fork_mutex() noexcept { return mutex_; }

 private:
  std::mutex mutex_;
  string_table table_;
};

/// Domains: name -> id (0: the default domain). Ids fit a record's domain field.
class domain_registry {
 public:
  domain_registry();
  /// The id of domain `name`. Ids are 16 bits: past 65,535 named domains every new name gets the last
  /// id, 0xFFFF, and is counted in overflowed() (DROPPED_HOST_RECORDS).
  std::uint16_t create(std::string_view name);
  std::vector<std::string> names();
  /// Creations past the limit since the process started.
  std::uint64_t overflowed() const noexcept { return overflowed_.load(std::memory_order_relaxed); }
  /// Around fork() only (see state()).
  std::mutex& fork_mutex() noexcept { return mutex_; }

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

  std::atomic<std::uint64_t> next_chunk_serial{1};
  std::atomic<std::size_t> session_bytes{0};   ///< chunk memory taken by the active session
  std::atomic<std::size_t> session_cap{0};     ///< the active session's memory cap
  std::atomic<std::uint64_t> dropped{0};       ///< NVTX events dropped by the active session
  std::atomic<std::uint64_t> dropped_memory{0};  ///< memory events dropped by the active session
  std::atomic<bool> attached{false};
  std::atomic<bool> session_open{false};       ///< held by a capture_claim or capture_session (one)
  std::uint32_t last_epoch = 0;                ///< guarded by session_open
  clock_sample session_start;                  ///< guarded by session_open
  /// The string id of work_mark_names[0]; the others follow (interned when the state is made).
  std::uint32_t first_work_name = 0;
};

tool_state& state() noexcept;

/// Non-zero while recording: the active session's epoch (stored with release). The hot path returns after
/// one relaxed load of it when it is 0; prepare() issues an acquire fence otherwise (no instruction on
/// x86), so what the session wrote before publishing the epoch (clock choice, cap) is visible.
extern std::atomic<std::uint32_t> active_epoch;

/// active_epoch as every NVTX callback reads it first: one relaxed load, ordered by prepare()'s acquire
/// fence when non-zero. ThreadSanitizer does not model fences (GCC rejects them under -Wtsan), so a TSan
/// build reads it with acquire instead: the same ordering (both are a plain load on x86), seen by TSan.
inline std::uint32_t load_active_epoch() noexcept {
#if defined(__SANITIZE_THREAD__)
  return active_epoch.load(std::memory_order_acquire);
#else
  return active_epoch.load(std::memory_order_relaxed);
#endif
}
/// The calling thread's buffer (nullptr until it first records). Initial-exec TLS: one fs-relative load,
/// also in the injected shared library (8 bytes of static TLS).
/// (`__thread`, not thread_local: no TLS wrapper call when another translation unit reads it.)
extern __thread thread_buffer* this_thread_buffer __attribute__((tls_model("initial-exec")));

/// What a drop at the memory cap is counted as: an NVTX event (tool_state::dropped) or a memory event
/// (tool_state::dropped_memory).
enum class dropped_event : std::uint8_t { nvtx, memory };

/// Slow path: the calling thread's buffer ready to append one event in `epoch` (registers the thread,
/// starts its chunk for this session, or hands over a chunk without room for it and takes a new one: a
/// fresh chunk has room for any event). nullptr when the event must be dropped (memory cap, or the
/// session ended meanwhile); the drop is counted here, as `what`.
thread_buffer* prepare_slow(std::uint32_t epoch, dropped_event what) noexcept;

/// The calling thread's buffer ready to append `records` records in `epoch` (read relaxed, non-zero), or
/// nullptr (dropped and counted: as a memory event when `records` is memory_event_records).
template <std::uint32_t records = 1>
inline thread_buffer* prepare(std::uint32_t epoch) noexcept {
#if !defined(__SANITIZE_THREAD__)
  std::atomic_thread_fence(std::memory_order_acquire);  // pairs with the session's release of the epoch
#endif
  thread_buffer* buffer = this_thread_buffer;
  if (buffer != nullptr && buffer->epoch == epoch && buffer->used <= records_per_chunk - records) [[likely]] {
    return buffer;
  }
  return prepare_slow(epoch, records == memory_event_records ? dropped_event::memory : dropped_event::nvtx);
}

/// Sentinel index: the record was dropped (counted) because its rebase needed a chunk past the cap.
inline constexpr std::uint32_t dropped_index = 0xFFFFFFFFu;

/// `ticks` is too far from the chunk's base: rebases (a fresh chunk based just below `ticks`, or the empty
/// current chunk in place). False when the fresh chunk is refused (memory cap: the event is counted as
/// `what`, and the thread drops until the session ends).
bool rebase(thread_buffer* buffer, std::uint64_t ticks, dropped_event what) noexcept;

/// Slow path of append(): rebase(), then the append; dropped_index when the rebase was refused.
std::uint32_t append_rebased(thread_buffer* buffer, std::uint64_t ticks, record_kind kind, std::uint16_t domain,
                             std::uint32_t name) noexcept;

/// Appends a record to a buffer that prepare() returned; returns its index in the current chunk, or
/// dropped_index. One branch beyond the store: whether the tick delta fits.
inline std::uint32_t append(thread_buffer* buffer, std::uint64_t ticks, record_kind kind, std::uint16_t domain,
                            std::uint32_t name) noexcept {
  const std::uint64_t delta = ticks - buffer->base;  // a clock read below the base wraps: rebased too
  if (delta > max_tick_delta) [[unlikely]] return append_rebased(buffer, ticks, kind, domain, name);
  const std::uint32_t index = buffer->used;
  buffer->current->records[index] = make_record(delta, kind, domain, name);
  buffer->used = index + 1;
  buffer->current->used.store(index + 1, std::memory_order_release);
  return index;
}

/// Appends a work record (no time, so never a rebase) to a buffer that prepare() returned.
inline void append_work(thread_buffer* buffer, work_quantity quantity, std::uint16_t domain, std::uint64_t value) noexcept {
  const std::uint32_t index = buffer->used;
  buffer->current->records[index] = make_work_record(quantity, domain, value);
  buffer->used = index + 1;
  buffer->current->used.store(index + 1, std::memory_order_release);
}

/// Appends a memory event's two records to a buffer that prepare<memory_event_records>() returned and
/// publishes them with one release; false when its rebase was refused (dropped, counted).
inline bool append_memory(thread_buffer* buffer, std::uint64_t ticks, const memory_payload& event) noexcept {
  if (ticks - buffer->base > max_tick_delta) [[unlikely]] {
    if (!rebase(buffer, ticks, dropped_event::memory)) return false;
  }
  const std::uint32_t index = buffer->used;
  record* slot = buffer->current->records + index;
  slot[0] = make_record(ticks - buffer->base, record_kind::memory, memory_domain_field(event.device, event.kind),
                        static_cast<std::uint32_t>(static_cast<std::uint64_t>(event.bytes)));
  slot[1] = make_memory_payload_record(event);
  buffer->used = index + memory_event_records;
  buffer->current->used.store(index + memory_event_records, std::memory_order_release);
  return true;
}

/// The id of an unregistered name, through the thread's cache (content hash) in front of the registry.
std::uint32_t intern_cached(thread_buffer* buffer, const char* text, std::size_t length) noexcept;

/// Hands a chunk to the collector (lock-free push).
void hand_over(chunk* c) noexcept;

/// Returns chunks to the pool (or frees them past the pool's cap); one still a live thread's
/// current_published goes back onto `handover` for a later collection, and its serial into
/// `pushed_back` when given. Returns how many went to the pool or were freed. Collector only; takes
/// registry.mutex, then pool_mutex.
std::size_t release_chunks(const std::vector<chunk*>& chunks, std::vector<std::uint64_t>* pushed_back = nullptr) noexcept;

}  // namespace regionprof::capture_detail
