// The NVTX capture tool's C++ API: record every NVTX range of this process into a regionprof::trace.
//
// The tool is an NVTX v3 tool that NVTX attaches in one of two ways (docs/design.md, "Hot path (capture)"):
// - static: the program links regionprof::nvtx_capture (regionprof::nvtx_regions's harness does), whose
//   strong `InitializeInjectionNvtx2_fnptr` NVTX finds in the program's own NVTX instance;
// - injected: `NVTX_INJECTION64_PATH` names a shared library that exports `InitializeInjectionNvtx2`
//   (build/lib/libregionprof_nvtx_inject.so; regionprof's CUDA injection library includes it too).
// NVTX tries the environment variable first: when it names another library, the static tool never
// attaches, and a session's stop() reports NVTX_TOOL_CONFLICT.
//
// The tool is always attached once NVTX initialised it, but records only while a capture_session is
// active (one per process at a time); outside a session each NVTX call returns after one relaxed load.
// Memory events (docs/design.md, rule 21) come in through record_memory_event, not NVTX: an allocator's
// reporting hook (the LibTorch adapter, Python's memory=True) calls it in the process's own copy of the
// tool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// The names of the marks that declare work (docs/design.md, rule 18), by quantity: bytes, flops, items.
/// A mark of one of these names with a non-negative numeric payload is a declaration, not a mark
/// (`regionprof::declare_work` emits them).
inline constexpr const char* work_mark_names[3] = {"regionprof.work.bytes", "regionprof.work.flops",
                                                   "regionprof.work.items"};

namespace capture_detail {
struct window_state;
}

/// Whether a range named `name` in NVTX domain `domain` ("" for the default domain) marks a run, for
/// capture_session::cut_window.
using run_marker_predicate = std::function<bool(std::string_view name, std::string_view domain)>;

/// Settings of one capture session.
struct capture_options {
  /// Chunk memory (12-byte records) one session may take. Past it, records are dropped and counted
  /// exactly (DROPPED_HOST_RECORDS). A range (push + pop) costs 24 bytes, a memory event 24.
  std::size_t memory_cap_bytes = std::size_t{1} << 30;
};

/// Counts of what a session recorded and what it could not use.
struct capture_stats {
  std::uint64_t records = 0;          ///< records kept (push, pop, start, end, mark, work; two per memory event)
  std::uint64_t dropped_records = 0;  ///< NVTX events dropped at the memory cap (DROPPED_HOST_RECORDS)
  std::uint64_t memory_events = 0;    ///< memory events recorded (trace::memory_events)
  std::uint64_t dropped_memory_events = 0;  ///< memory events dropped at the memory cap (DROPPED_HOST_RECORDS)
  std::uint64_t unmatched_pops = 0;   ///< pops with no open push of their domain on their thread
  std::uint64_t unmatched_ends = 0;   ///< range ends whose start this session did not record
  std::uint64_t open_at_stop = 0;     ///< ranges still open at stop: dropped from the trace
  std::uint64_t lost_to_cap = 0;      ///< ranges whose start or end was dropped at the cap
  std::uint64_t clamped_ranges = 0;   ///< start/end ranges ended before their start (clock skew)
  std::uint64_t marks = 0;            ///< marks recorded (see capture_result::marks)
  /// Work marks (docs/design.md, rule 18) with no push range of their domain open on their thread, or
  /// whose range did not reach the trace (left open, lost to the cap): their work is in no region.
  std::uint64_t unattached_work = 0;
  std::uint64_t chunk_bytes = 0;      ///< chunk memory the session took (records + chunk headers)
  /// NVTX domains the process created past the 65,535 named domain ids (DROPPED_HOST_RECORDS): each shares
  /// the last id. Counted for the process's lifetime, not per session.
  std::uint64_t domains_past_limit = 0;
  bool tool_attached = false;         ///< NVTX had attached this tool when the session stopped
  bool clock_is_tsc = false;          ///< ticks were TSC cycles (else CLOCK_MONOTONIC ns)
  double ns_per_tick = 1.0;           ///< the session's calibration
};

/// An NVTX mark: an instant, kept beside the trace (a trace has no zero-length events).
struct nvtx_mark {
  std::int64_t time_ns = 0;
  name_id name = 0;           ///< into capture_result::data.strings
  thread_index thread = 0;    ///< into capture_result::data.threads
  domain_index domain = 0;    ///< into capture_result::data.domains
};

/// What stop() returns: the trace (threads, range intervals, strings, domains, warnings), the marks, and
/// the counts behind the warnings.
struct capture_result {
  trace data;
  std::vector<nvtx_mark> marks;
  capture_stats stats;
};

/// The process's one capture session, held before it records. From construction until a capture_session
/// takes it (or it is destroyed), every other capture_claim, capture_session and regionprof::profile in
/// the process is refused with std::logic_error, and nothing is recorded. For a caller that runs code of
/// its own between taking the session and recording (regionprof::profile's warm-up runs): a concurrent
/// caller is refused before any of that code runs, and so leaves nothing in the session.
///
/// ```
/// regionprof::capture_claim claim;                         // throws if a session is active or claimed
/// warm_up();                                               // not recorded
/// regionprof::capture_session session(std::move(claim));  // records from here
/// ```
class capture_claim {
 public:
  /// Claims the process's session. Throws std::logic_error when a capture session is active or claimed.
  capture_claim();
  /// Gives the session back unless a capture_session took it.
  ~capture_claim();
  /// Takes `other`'s claim; `other` holds none.
  capture_claim(capture_claim&& other) noexcept;

  capture_claim(const capture_claim&) = delete;
  capture_claim& operator=(const capture_claim&) = delete;
  capture_claim& operator=(capture_claim&&) = delete;

 private:
  friend class capture_session;
  bool held_ = false;
};

/// Records every NVTX range of the process from construction to stop(): push/pop and start/end from
/// every domain and thread, marks, domain and string registrations, and the memory events
/// record_memory_event reports. One session at a time.
///
/// Ranges become CPU intervals (kind `range`) on CLOCK_MONOTONIC ns: a pop closes the innermost open
/// push of its domain on its thread; a start/end range (which may end on another thread) is an interval
/// on the thread that started it. Ranges still open at stop() are dropped from the trace and counted,
/// as are pops and ends with no recorded start (UNBALANCED_RANGES). Memory events become
/// trace::memory_events, with their thread and time as a range's push gets them.
///
/// ```
/// regionprof::capture_session session;
/// run_workload();
/// regionprof::capture_result result = session.stop();
/// std::printf("%zu ranges\n", result.data.intervals.size());
/// ```
class capture_session {
 public:
  /// Starts recording. Throws std::logic_error when another capture session is active or claimed in this
  /// process (sessions never nest or overlap: stop the other one first).
  explicit capture_session(const capture_options& options = {});
  /// Starts recording on `claim`, which the session takes (the claim is left holding nothing; when this
  /// throws, it keeps its claim). Throws std::logic_error for a claim that holds nothing (moved from, or
  /// taken by a session).
  explicit capture_session(capture_claim&& claim, const capture_options& options = {});
  /// Stops recording and discards what was recorded if stop() was not called. Never throws.
  ~capture_session();

  capture_session(const capture_session&) = delete;
  capture_session& operator=(const capture_session&) = delete;
  capture_session(capture_session&&) = delete;
  capture_session& operator=(capture_session&&) = delete;

  /// Stops recording and converts the records into a trace. Throws std::logic_error when called twice.
  capture_result stop();

  /// Windows of a long session (docs/capture.md, "Windows"): converts
  /// what the threads have published so far, without stopping or pausing them, and once `runs` topmost
  /// run markers (ranges for which `is_marker` holds, not inside another marker on their thread) have
  /// closed, returns the window: every closed range that started before the end of the last of those
  /// markers (the cut), and the marks and memory events before it. Those records are then dropped (their
  /// chunks go back to the pool and out of the memory cap's count); ranges still open at the cut, and
  /// everything that starts after it, stay for a later window or stop(), which returns what is left.
  /// nullopt while fewer than `runs` markers have closed. A window's `stats.records` counts the records
  /// read since the window before (over every window and stop() they sum to the session's records); its
  /// other counts and warnings are its own, and ranges open at a cut are not counted as open (only stop()
  /// counts what is still open). Not to be called concurrently with itself or stop(); the threads that
  /// record need no lock.
  ///
  /// ```
  /// regionprof::capture_session session;
  /// auto is_step = [](std::string_view name, std::string_view) { return name == "step"; };
  /// while (running()) {
  ///   if (auto window = session.cut_window(1000, is_step)) write(window->data);  // 1000 runs each
  /// }
  /// write(session.stop().data);  // the last, partial window
  /// ```
  std::optional<capture_result> cut_window(std::size_t runs, const run_marker_predicate& is_marker);

  /// Chunk memory taken so far by this session (bytes); what memory_cap_bytes limits. Windows give back
  /// the chunks they dropped.
  std::size_t chunk_bytes() const noexcept;

 private:
  std::uint32_t epoch_ = 0;  // 0 once stopped
  capture_options options_;
  std::unique_ptr<capture_detail::window_state> windows_;  // what cut_window carries between calls
  std::uint64_t reported_drops_ = 0;  // records dropped at the cap that an earlier window reported
  std::uint64_t reported_memory_drops_ = 0;  // memory events dropped at the cap that an earlier window reported
};

/// True while a capture_session is active or a capture_claim holds the session in this process.
bool capture_session_active() noexcept;

/// True once NVTX has attached regionprof's capture tool (in this module's copy of the tool). NVTX
/// attaches lazily, at the first NVTX call of the program; `regionprof::profile` forces that first.
bool nvtx_capture_attached() noexcept;

/// When this copy of the tool is not attached and `NVTX_INJECTION64_PATH` is set (NVTX tries that
/// library first and then never the static tool), a message saying so and what to do; empty otherwise.
/// capture_session::stop() adds it to the trace as NVTX_TOOL_CONFLICT (source nvtx).
std::string nvtx_tool_conflict();

/// nvtxRangePushA and nvtxRangePop as the capture records them (default domain; the name without
/// torch's per-call suffix), callable without NVTX: a RecordFunction callback compiled apart from this
/// module (the Python package's op ranges, src/regionprof/torch/op_ranges.hpp) pushes each op through
/// them. Both return what NVTX's would; neither allocates for a name already in the thread's cache.
///
///   regionprof::push_default_range("aten::linear"); ...; regionprof::pop_default_range();
int push_default_range(const char* name) noexcept;
int pop_default_range() noexcept;

/// The largest CUDA ordinal record_memory_event takes (a record holds device + 1 in 14 bits).
inline constexpr memory_device max_memory_device = 0x3FFE;

/// Records a memory event (docs/design.md, rule 21) on the calling thread at the capture clock's now: an
/// allocation (`bytes` > 0), a free (`bytes` < 0, |bytes| freed) or a failed allocation (`bytes` asked
/// for) on `device` (cpu_memory, or CUDA ordinal 0 to max_memory_device), `total_allocated` the device's
/// total allocated after it in bytes (memory_event::no_total when the source gives none). The session
/// makes it a trace::memory_events entry, its thread and time as a range's push gets them. For
/// allocators' reporting hooks (the LibTorch adapter's, Python's memory=True, compiled apart from this
/// module and handed its address): no lock, no allocation; not recording, it returns after one relaxed
/// load; past the memory cap the event is dropped and counted (capture_stats::dropped_memory_events,
/// DROPPED_HOST_RECORDS).
///
/// Returns 1 when recorded; 0 when no session records (nothing checked) or the event was dropped; -1
/// (nothing recorded) for a device outside cpu_memory..max_memory_device, a kind that is not a
/// memory_event_kind, `bytes` of the wrong sign for the kind (an allocation's > 0, a free's < 0 and above
/// -2^63, a failed allocation's >= 0) or a negative total other than no_total: what a trace holds is
/// always what the Chrome trace writer and the importer take back.
///
///   using regionprof::memory_event_kind;
///   regionprof::record_memory_event(32768, total, regionprof::cpu_memory, memory_event_kind::allocation);
int record_memory_event(std::int64_t bytes, std::int64_t total_allocated, memory_device device,
                        memory_event_kind kind) noexcept;

/// The NVTX tool entry point: fills the callback tables of the NVTX instance that calls it and returns
/// 1. `InitializeInjectionNvtx2` (injected route) and `InitializeInjectionNvtx2_fnptr` (static route)
/// call it; a shared library that combines the capture with other tools calls it from its own
/// `InitializeInjectionNvtx2`. The argument is NVTX's `NvtxGetExportTableFunc_t`.
int attach_nvtx_capture(const void* (*get_export_table)(std::uint32_t)) noexcept;

}  // namespace regionprof
