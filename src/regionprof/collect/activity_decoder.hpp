// Decoding CUPTI activity records into trace events.
//
// Buffers are walked with CUPTI's walker through the backend (the same path for CUPTI's buffers and for
// buffers built by tests). Each record is copied out at once (kernel names demangled and interned), so
// buffers can be released after the walk. append_to() then maps CUPTI time onto the one clock and adds
// device ops, API calls as CPU intervals on their threads, synchronization records as ranges under
// their API call, and allocations and frees (MEMORY2) as memory events on their API call's thread. What cannot be used is counted, and collection_warnings() reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/clock_fit.hpp"
#include "regionprof/collect/graph_capture.hpp"
#include "regionprof/trace/trace.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof::collect {

/// What the decoder saw, by record kind, and what it could not use.
struct decode_counts {
  std::uint64_t records = 0;           ///< records walked
  std::uint64_t record_bytes = 0;      ///< their bytes (for the buffer-size suggestion)
  std::uint64_t kernels = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memsets = 0;
  std::uint64_t runtime_calls = 0;
  std::uint64_t driver_calls = 0;
  std::uint64_t synchronizations = 0;
  std::uint64_t overheads = 0;
  std::uint64_t untimed = 0;           ///< records with a zero or inverted timestamp, skipped (CLOCK_ANOMALY)
  std::uint64_t outside_session = 0;   ///< records timed outside the session's window, skipped (CLOCK_ANOMALY)
  std::uint64_t graph_ops = 0;         ///< device ops of graph replays (a graph node id)
  std::uint64_t captured_graph_ops = 0;  ///< of those, ops whose node's capturing API call was found
  std::map<std::uint32_t, std::uint64_t> skipped_kinds;  ///< kinds regionprof does not decode -> count
  std::uint64_t cut_buffers = 0;       ///< buffers whose walk ended early (truncated or invalid record)
  std::uint64_t unread_bytes = 0;      ///< bytes those walks could not read
  std::vector<std::string> walk_errors;
  std::uint64_t orphan_synchronizations = 0;  ///< sync records whose API call was not recorded (skipped)
  std::uint64_t memory_records = 0;    ///< MEMORY2 records (allocations and frees)
  std::uint64_t orphan_memory_records = 0;  ///< MEMORY2 records whose API call was not recorded (skipped)
  std::uint64_t memory_pool_records = 0;       ///< MEMORY_POOL records (pools created, trimmed, destroyed)
  std::uint64_t orphan_memory_pool_records = 0;  ///< MEMORY_POOL records whose API call was not recorded
  /// Windows: records that arrived after the window of their launch was written (LATE_DEVICE_RECORDS).
  std::uint64_t late_records = 0;
};

/// CUPTI's own overhead of one kind (OVERHEAD records).
struct overhead_total {
  std::uint64_t count = 0;
  std::uint64_t ns = 0;
};

/// How the session's buffers fared (from the pool and CUPTI), for the warnings.
struct collection_stats {
  std::uint64_t dropped_records = 0;    ///< cuptiActivityGetNumDroppedRecords
  std::uint64_t refused_requests = 0;   ///< buffer requests the full pool could not serve
  std::size_t buffer_bytes = 0;
  std::size_t buffer_count = 0;
  std::size_t outstanding_buffers = 0;  ///< buffers CUPTI never returned
  std::string flush_error;              ///< cuptiActivityFlushAll's failure, if any
  std::uint64_t spilled_buffers = 0;    ///< spill buffers filled while the pool was exhausted (CUPTI < v27)
  std::uint64_t spilled_records = 0;    ///< their records, discarded
  std::uint64_t lost_graph_nodes = 0;   ///< graph node creations the callback could not keep
};

/// The session's span on the one clock, ns: records timed outside it (by more than the tolerance) are
/// not this session's (a stale buffer, a record stamped on another clock) and are skipped.
struct session_window {
  std::int64_t start_ns = 0;
  std::int64_t stop_ns = 0;
  static constexpr std::int64_t tolerance_ns = 10'000'000;  ///< 10 ms: the clock fit's error is far below
};

class activity_decoder {
 public:
  explicit activity_decoder(const activity_backend& backend);

  /// Walks one completed buffer and decodes every record in it.
  void decode_buffer(const std::uint8_t* data, std::size_t valid_bytes);
  /// Decodes one record; kinds regionprof does not decode are counted and skipped.
  void decode(const activity_record& record);

  /// Appends the decoded activity to `out` with CUPTI times mapped by `clock`. A driver call whose
  /// correlation id a runtime call also carries (a driver call made by the runtime) keeps its interval
  /// but gives up the id, so each launch has one owner. Records outside `window` (when given) are
  /// skipped and counted. Device ops of graph replays get a trace::graph_ops entry whose capture
  /// correlation id is the API call, on the creating thread, around the time `nodes` noted the node's
  /// creation (0 when the node is not in `nodes`).
  void append_to(trace& out, const clock_map& clock, const std::optional<session_window>& window = std::nullopt,
                 const std::vector<node_origin>& nodes = {});

  /// Windows (docs/design.md, "Long runs: windows"): moves the records of
  /// the window that ends at `cut_ns` (monotonic_now_ns()'s timeline; CUPTI times mapped by `clock`) out
  /// into a decoder of their own, whose append_to() adds them to that window's trace:
  /// - an API call goes to the window in which it started (before `cut_ns`; later ones are carried);
  /// - a device op or synchronization goes to the window of its launch, the API call with its
  ///   correlation id: carried while that call is carried; with no such call decoded (its record still
  ///   in CUPTI's buffers, or lost), by the id alone, CUPTI's ids increasing with each call: an id no
  ///   higher than the highest of this window's calls was launched in this window, a higher one is
  ///   carried; an op with id 0 by its own start;
  /// - late (dropped, counted in the returned decoder's counts().late_records): an API call that started
  ///   before the previous cut, and a record of such a call or with an id no higher than the highest a
  ///   window already taken holds: their window was written without them.
  /// With `last` (the final window, at stop) nothing is carried. The returned decoder's counts() has
  /// only late_records (and what its append_to() counts); this one's keep the decode totals.
  activity_decoder take_window(std::int64_t cut_ns, const clock_map& clock, bool last);
  /// True once take_window() has taken a window other than the last.
  bool windows_taken() const noexcept { return taken_cut_ns_.has_value(); }

  const decode_counts& counts() const noexcept { return counts_; }
  /// Adds what a window decoder counted (take_window's late records, append_to's skipped, orphaned
  /// and graph records) to this decoder's counts, for the session's warnings.
  void add_window_counts(const decode_counts& window) noexcept;
  const std::map<std::uint32_t, overhead_total>& overheads() const noexcept { return overheads_; }

 private:
  struct api_call {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::uint32_t correlation = 0;
    std::uint32_t cbid = 0;
    interval_kind kind = interval_kind::runtime_api;
  };
  struct device_work {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t bytes = 0;
    std::uint32_t name = 0;  ///< index into names_
    std::uint32_t correlation = 0;
    std::uint32_t stream = 0;
    std::uint32_t device = 0;
    device_op_kind kind = device_op_kind::kernel;
    std::uint64_t graph_node = 0;  ///< CUPTI's graphNodeId; 0 when not launched by a graph
  };
  /// A synchronization (SYNCHRONIZATION, `type` its type) or a memory pool operation (MEMORY_POOL, `type`
  /// its operation, start = end its instant): a range under the API call with its correlation id.
  struct synchronization {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint32_t correlation = 0;
    std::uint32_t type = 0;
  };
  /// An allocation or free (MEMORY2): one instant, kept as start = end so it windows like the others.
  struct memory_operation {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t bytes = 0;
    std::uint32_t correlation = 0;
    memory_device device = cpu_memory;
    memory_event_kind kind = memory_event_kind::allocation;
  };

  /// Records one kernel, copy or memset when timed; `name` (a name index) is computed only then.
  template <class Record, class Name>
  void add_device_work(const Record& record, std::uint64_t bytes, device_op_kind kind, const Name& name);
  std::uint32_t name_index(const std::string& name);
  std::uint32_t kernel_name(const char* pointer);

  const activity_backend& backend_;
  decode_counts counts_;
  std::map<std::uint32_t, overhead_total> overheads_;
  std::vector<api_call> calls_;
  std::vector<device_work> work_;
  std::vector<synchronization> synchronizations_;
  std::vector<memory_operation> memory_;
  std::vector<synchronization> memory_pools_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_indices_;
  std::unordered_map<const char*, std::uint32_t> kernel_names_;  // CUPTI shares one name per kernel
  std::optional<std::int64_t> taken_cut_ns_;  // take_window: the cut of the last window taken
  std::uint32_t taken_correlation_ = 0;       // take_window: the highest id a window taken holds
};

/// Kineto's names, so imported and recorded traces group alike: "Memcpy HtoD (Pageable -> Device)".
std::string memcpy_name(std::uint32_t copy_kind, std::uint32_t source_kind, std::uint32_t destination_kind);
/// "Memset (Device)".
std::string memset_name(std::uint32_t memory_kind);
/// "Stream Sync", "Context Sync", "Event Sync", "Stream Wait Event".
std::string synchronization_name(std::uint32_t type);
/// "CUPTI buffer flush", "driver compiler", ... for CUpti_ActivityOverheadKind.
std::string overhead_name(std::uint32_t overhead_kind);
/// "CONTEXT", "NAME", ... for a CUpti_ActivityKind ("kind 99" when unknown).
std::string activity_kind_name(std::uint32_t kind);

/// The warnings for what the collection lost or cost: DROPPED_DEVICE_RECORDS (with the buffer size that
/// would have sufficed), CLOCK_ANOMALY (records with zero, inverted or out-of-session times, skipped),
/// and CUPTI_OVERHEAD (CUPTI's own time by kind).
std::vector<warning> collection_warnings(const decode_counts& counts,
                                         const std::map<std::uint32_t, overhead_total>& overheads,
                                         const collection_stats& stats);

}  // namespace regionprof::collect
