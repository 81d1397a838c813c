// regionprof trace model: the one input of the analysis.
//
// Every timestamp is integer nanoseconds on one clock (docs/design.md, "One clock"). Producers (the NVTX
// capture, the CUPTI collector, the Kineto importer, tests) append plain records; the analysis reads them
// and never mutates the trace. Records are compact on purpose: a 10-million-event trace must fit in
// <= 64 bytes per event during analysis, so names are ids into one string table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "regionprof/trace/process_identity.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

namespace detail {
struct json_value_holder;  // a JSON value as read (trace/run_target_json.hpp)
}  // namespace detail

/// A member of report `target` that regionprof carries without reading it: Kineto's `deviceProperties`
/// and `distributedInfo`, another tool's members, or a member of a modelled name whose value has
/// another type. Written back as it was read, in its place after the modelled members.
struct foreign_member {
  std::string name;
  std::shared_ptr<const detail::json_value_holder> value;  ///< never null
};

/// Report `target`: what was profiled. `type` always; each producer sets a few of the modelled members
/// (run_target.def: `kind`, `command`, `benchmark`, `iterations`, `iterations_per_run`, the process
/// identity `rank` ... `pid`, the window's index and length, `ended_by_signal`); the writers put them in that
/// order, then the foreign ones (docs/report-schema.md, "target").
///
/// ```
/// regionprof::run_target target{.type = "process"};
/// target.command = std::vector<std::string>{"./app", "--fast"};
/// target.set_process(regionprof::this_process_identity());
/// ```
struct run_target {
  std::string type = "callable";
#define REGIONPROF_TARGET_MEMBER(name, value_type) std::optional<value_type> name;
#include "regionprof/trace/run_target.def"
#undef REGIONPROF_TARGET_MEMBER
  std::vector<foreign_member> foreign;

  /// Sets `rank`, `local_rank` and `world_size` (those the identity knows), `host` and `pid`.
  void set_process(const process_identity& identity);
};

/// Index into a trace's string_table. Id 0 is always the empty string.
using name_id = std::uint32_t;
/// Index into trace::threads.
using thread_index = std::uint32_t;
/// Index into trace::domains. Domain 0 is the unnamed (default) domain.
using domain_index = std::uint16_t;

/// What a CPU interval is. The values double as the Kineto `cat` it is exported under.
enum class interval_kind : std::uint8_t {
  range = 0,            ///< NVTX range or user annotation (Kineto `user_annotation`)
  cpu_op = 1,           ///< framework operator (Kineto `cpu_op`)
  python_function = 2,  ///< Python frame (Kineto `python_function`)
  runtime_api = 3,      ///< CUDA runtime API call (Kineto `cuda_runtime`); carries a correlation id
  driver_api = 4,       ///< CUDA driver API call (Kineto `cuda_driver`); carries a correlation id
};

/// True for the kinds that launch device work and carry a correlation id.
constexpr bool is_api_call(interval_kind kind) noexcept {
  return kind == interval_kind::runtime_api || kind == interval_kind::driver_api;
}

/// What a device operation is. The values double as the Kineto `cat` it is exported under.
enum class device_op_kind : std::uint8_t {
  kernel = 0,  ///< Kineto `kernel`
  memcpy = 1,  ///< Kineto `gpu_memcpy`
  memset = 2,  ///< Kineto `gpu_memset`
};

/// A closed time interval [start_ns, end_ns] on one CPU thread.
///
/// Invariant: start_ns <= end_ns. Input order matters: for two equal intervals on one thread the
/// earlier one in trace::intervals is the parent (docs/design.md, rule 1).
struct cpu_interval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  name_id name = 0;
  thread_index thread = 0;
  std::uint32_t correlation_id = 0;  ///< API calls only; 0 means none
  domain_index domain = 0;
  interval_kind kind = interval_kind::range;
  std::uint8_t reserved = 0;
};
static_assert(sizeof(cpu_interval) == 32, "cpu_interval must stay 32 bytes (memory budget)");

/// One operation executed by a device, launched by the API call with the same correlation id.
/// Kernels of one CUDA graph launch share that launch's correlation id.
struct device_op {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t bytes = 0;  ///< memcpy/memset size; 0 for kernels
  name_id name = 0;
  std::uint32_t correlation_id = 0;  ///< 0 means unknown
  std::uint32_t stream = 0;
  std::uint16_t device = 0;
  device_op_kind kind = device_op_kind::kernel;
  std::uint8_t reserved = 0;
};
static_assert(sizeof(device_op) == 40, "device_op must stay 40 bytes (memory budget)");

/// A device op replayed by a CUDA graph launch, and where its graph node was made (docs/design.md,
/// rule 15). The op keeps the launch's correlation id (its run); `capture_correlation_id` is the API call
/// during which the node, or the node it was cloned or instantiated from, was created (stream capture or
/// explicit construction): with graph_attribution::capture the op belongs to the region open around
/// that call. 0: the node was made before the session recorded (GRAPH_CAPTURED_BEFORE_PROFILING).
struct graph_op {
  std::uint64_t graph_node_id = 0;  ///< CUPTI's graph node id of the replayed (executable) node
  std::uint32_t op = 0;             ///< index into trace::device_ops
  std::uint32_t capture_correlation_id = 0;
};

/// The device a memory event is on: the host (`cpu`) or CUDA device N (`cuda:N`), as report keys name them.
using memory_device = std::int16_t;
/// memory_event::device of host memory (report key `cpu`); 0 and up are CUDA device ordinals.
inline constexpr memory_device cpu_memory = -1;

/// What a memory event is.
enum class memory_event_kind : std::uint8_t {
  allocation = 0,     ///< `bytes` > 0 were allocated (torch `[memory]` with Bytes > 0, CUPTI MEMORY2 allocation)
  free = 1,           ///< `bytes` were freed: a negative count (torch `[memory]` with Bytes < 0, CUPTI release)
  out_of_memory = 2,  ///< an allocation of `bytes` failed (torch `[OutOfMemory]`); allocates nothing
};

/// An allocation, free or failed allocation on one device, at an instant on one CPU thread (docs/design.md,
/// rule 21): owned as a launching call at that instant on that thread would be.
///
/// ```
/// trace.memory_events.push_back({.time_ns = 1500, .bytes = 32768, .total_allocated = 32768, .thread = main});
/// ```
struct memory_event {
  /// `total_allocated` when the source gives no device total.
  static constexpr std::int64_t no_total = std::numeric_limits<std::int64_t>::min();
  std::int64_t time_ns = 0;
  std::int64_t bytes = 0;  ///< allocation: > 0; free: < 0 (its |bytes| were freed); out_of_memory: asked for
  std::int64_t total_allocated = no_total;  ///< the device's total allocated after the event, bytes
  thread_index thread = 0;
  memory_device device = cpu_memory;
  memory_event_kind kind = memory_event_kind::allocation;
  std::uint8_t reserved = 0;
};
static_assert(sizeof(memory_event) == 32, "memory_event must stay 32 bytes (memory budget)");

/// True when `bytes` and `total_allocated` are what a trace's memory event of `kind` holds: an allocation's
/// bytes > 0, a free's < 0 and above -2^63 (so |bytes| is an int64), a failed allocation's >= 0; the total
/// memory_event::no_total or >= 0. What the capture records and the Chrome trace writer writes.
constexpr bool memory_event_fits(memory_event_kind kind, std::int64_t bytes, std::int64_t total_allocated) noexcept {
  const bool bytes_fit = kind == memory_event_kind::allocation ? bytes > 0
                         : kind == memory_event_kind::free
                             ? bytes < 0 && bytes != std::numeric_limits<std::int64_t>::min()
                             : bytes >= 0;
  return bytes_fit && (total_allocated >= 0 || total_allocated == memory_event::no_total);
}

/// `cpu` or `cuda:N`: a memory device's report key.
std::string memory_device_key(memory_device device);
/// The device of a report key `cpu` or `cuda:N` (N in 0..32767), or nullopt.
std::optional<memory_device> parse_memory_device_key(std::string_view key);

/// Work a region instance declared it did (docs/design.md, rule 18): each quantity is absent when not
/// declared. Declarations of one instance, and of several instances of a region in one run, sum.
///
/// ```
/// regionprof::declared_work work;
/// work.bytes = 1 << 20;  // the instance moved 1 MiB
/// ```
struct declared_work {
  // `{}` initializers: `{.bytes = n}` leaves the others out without -Wmissing-field-initializers.
  std::optional<std::uint64_t> bytes{};
  std::optional<std::uint64_t> flops{};
  std::optional<std::uint64_t> items{};

  /// True when no quantity is declared.
  bool empty() const noexcept { return !bytes && !flops && !items; }
  /// Adds `other` quantity by quantity; a quantity is present when either side has it. Saturates at
  /// 2^64 - 1 instead of wrapping.
  declared_work& operator+=(const declared_work& other) noexcept;
  friend bool operator==(const declared_work&, const declared_work&) = default;
};

/// The work declared inside one CPU interval (a range): `interval` indexes trace::intervals.
struct interval_work {
  std::uint32_t interval = 0;
  declared_work work;
};

/// One CPU thread of the traced process(es).
struct thread_info {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  name_id name = 0;  ///< thread name when known, else 0
};

/// Interned, immutable strings. Views returned by view() stay valid for the table's lifetime.
///
/// ```
/// regionprof::string_table strings;
/// auto id = strings.intern("layer_0");
/// assert(strings.view(id) == "layer_0" && strings.intern("layer_0") == id);
/// ```
class string_table {
 public:
  string_table();
  string_table(const string_table& other);
  string_table& operator=(const string_table& other);
  string_table(string_table&&) noexcept = default;
  string_table& operator=(string_table&&) noexcept = default;

  /// The id of `text`, adding it when new. Equal content always gives the same id.
  name_id intern(std::string_view text);
  /// The id of `text` when present, else `npos`. Never adds.
  name_id find(std::string_view text) const;
  /// The string of `id`. Precondition: id < size(). Its data() is NUL-terminated and keeps its address
  /// for the table's life (moves included), so a caller may hand it out as a C string.
  std::string_view view(name_id id) const { return views_[id]; }
  std::size_t size() const noexcept { return views_.size(); }

  static constexpr name_id npos = static_cast<name_id>(-1);

 private:
  std::deque<std::string> storage_;  // deque: element addresses are stable
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, name_id> index_;
};

/// Everything a profile is computed from. Plain data: producers fill it, the analysis reads it.
///
/// ```
/// regionprof::trace t;
/// auto main = t.add_thread(1, 1);
/// t.intervals.push_back({0, 100, t.strings.intern("regionprof.profiled_run"), main, 0,
///                        t.domain("regionprof"), regionprof::interval_kind::range});
/// ```
struct trace {
  string_table strings;
  std::vector<name_id> domains{0};  ///< domain names; domains[0] is the unnamed domain
  std::vector<thread_info> threads;
  std::vector<cpu_interval> intervals;  ///< any order across threads; see cpu_interval
  std::vector<device_op> device_ops;
  /// The device ops that CUDA graph replays ran, in op order (one entry each, at most one per op).
  std::vector<graph_op> graph_ops;
  /// Work declared by ranges (rule 18), any order, at most one entry per interval (the producer sums a
  /// range's declarations). Empty for imported traces.
  std::vector<interval_work> declared_work;
  /// Allocations, frees and failed allocations (rule 21), any order.
  std::vector<memory_event> memory_events;

  /// True when device tracing was active (even if no device op was recorded). A trace with device
  /// ops has device data whatever this says; see has_device_data().
  bool device_tracing = false;

  /// Wall time of each measured run (ns) as the harness measured it, in run order. Empty when the
  /// runs come from markers alone; the analysis then uses each marker's duration.
  std::vector<std::int64_t> run_wall_times_ns;

  /// Region id -> type name of the module behind it (LibTorch adapter). Other regions report "-".
  std::map<std::string, std::string> module_types;

  /// Report `target`: what was profiled.
  run_target target;

  /// Anomalies found by the producers (capture, collector, importer), each already counted.
  std::vector<warning> warnings;

  bool has_device_data() const noexcept { return device_tracing || !device_ops.empty(); }

  /// Why the trace's times are out of the range the analysis computes in, or empty when they are in
  /// it. Every figure of the analysis is a sum of (parts of) durations or a difference of two times, all
  /// int64 ns; they cannot overflow when the durations of all intervals and device ops add up to at
  /// most 2^62 ns (146 years) and the latest end minus the earliest start is at most 2^62 ns. Real
  /// traces are far inside; a hostile file may not be (the importer refuses it, analyze() throws).
  std::string time_range_problem() const;

  /// The index of domain `name`, adding it when new.
  domain_index domain(std::string_view name);
  /// The index of thread (pid, tid), adding it when new.
  thread_index add_thread(std::int64_t pid, std::int64_t tid, std::string_view name = {});
  /// Total number of events (CPU intervals, device ops and memory events).
  std::size_t event_count() const noexcept { return intervals.size() + device_ops.size() + memory_events.size(); }
};

}  // namespace regionprof
