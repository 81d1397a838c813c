#include "regionprof/import/kineto_mapping.hpp"

#include <algorithm>
#include <bit>
#include <boost/json.hpp>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "regionprof/import/error_position.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/import/input_window.hpp"
#include "regionprof/import/regionprof_metadata.hpp"
#include "regionprof/json/microseconds_fast.hpp"
#include "regionprof/trace/run_target_json.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof::import_detail {
namespace {

enum class cat_class : std::uint8_t { cpu, device, ignored, unknown };

struct cat_info {
  cat_class cls = cat_class::unknown;
  interval_kind cpu_kind = interval_kind::range;
  device_op_kind device_kind = device_op_kind::kernel;
};

/// The categories of every Kineto vintage. PyTorch 1.10 and later (Kineto's ActivityType names) write
/// cpu_op, user_annotation, python_function, cuda_runtime, cuda_driver, kernel, gpu_memcpy and
/// gpu_memset; ROCm builds write the same names (HIP API calls as cuda_runtime). PyTorch 1.8 wrote
/// every CPU event, record_function ranges and ProfilerStep#N included, as Operator, and CUPTI's as
/// Runtime, Kernel, Memcpy and Memset; PyTorch 1.9 wrote the CPU events under the new names and kept
/// the capitalised CUPTI ones. Their args carry the same correlation, device, stream and bytes.
cat_info classify(std::string_view cat) noexcept {
  if (cat == "cpu_op") return {cat_class::cpu, interval_kind::cpu_op, {}};
  if (cat == "kernel") return {cat_class::device, {}, device_op_kind::kernel};
  if (cat == "cuda_runtime") return {cat_class::cpu, interval_kind::runtime_api, {}};
  if (cat == "user_annotation") return {cat_class::cpu, interval_kind::range, {}};
  if (cat == "python_function") return {cat_class::cpu, interval_kind::python_function, {}};
  if (cat == "cuda_driver") return {cat_class::cpu, interval_kind::driver_api, {}};
  if (cat == "gpu_memcpy") return {cat_class::device, {}, device_op_kind::memcpy};
  if (cat == "gpu_memset") return {cat_class::device, {}, device_op_kind::memset};
  if (cat == "Operator") return {cat_class::cpu, interval_kind::cpu_op, {}};
  if (cat == "Runtime") return {cat_class::cpu, interval_kind::runtime_api, {}};
  if (cat == "Kernel") return {cat_class::device, {}, device_op_kind::kernel};
  if (cat == "Memcpy") return {cat_class::device, {}, device_op_kind::memcpy};
  if (cat == "Memset") return {cat_class::device, {}, device_op_kind::memset};
  // Kineto categories that carry no time to attribute: device-side copies of annotations
  // (gpu_user_annotation; PyTorch 1.8's User, on tid "stream N user"), the profiler's own span,
  // flows, synchronisation waits, profiler overhead, instant events.
  if (cat == "gpu_user_annotation" || cat == "User" || cat == "Trace" || cat == "ac2g" || cat == "fwdbwd" ||
      cat == "cuda_sync" || cat == "overhead" || cat == "cpu_instant_event" || cat == "cuda_profiler_range") {
    return {cat_class::ignored, {}, {}};
  }
  return {};
}

/// Phases that are not intervals by nature: metadata, flows, instants, counters, samples, objects.
bool is_non_interval_phase(std::string_view ph) noexcept {
  if (ph.size() != 1) return false;
  switch (ph[0]) {
    case 'M': case 's': case 't': case 'f': case 'i': case 'I': case 'C': case 'R': case 'P':
    case 'O': case 'N': case 'D':
      return true;
    default:
      return false;
  }
}

void count(name_counts& counts, std::string_view name) {
  auto it = counts.find(name);
  if (it == counts.end()) it = counts.emplace(std::string(name), 0).first;
  ++it->second;
}

/// A category or phase as the warnings print it: bare when it is a plain word, else quoted.
std::string display_name(std::string_view name) {
  if (name == "(no category)" || name == "(no phase)") return std::string(name);
  const bool plain = !name.empty() && name.size() <= 80 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == ':' || c == '#' || c == '-' || c == '/' || c == '(' || c == ')';
  });
  return plain ? std::string(name) : quote_text(name);
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

/// "12 events of 2 categories were not read: foo 2, gpu_user_annotation_x 10" (names in byte order;
/// past the first 32 names, "and N more": a hostile file's million categories make no 15 MB message).
std::string describe_not_read(const name_counts& counts, std::uint64_t events, std::string_view one,
                              std::string_view many) {
  constexpr std::size_t listed = 32;
  std::string text = plural(events, "event", "events") + " of " + plural(counts.size(), one, many) +
                     (events == 1 ? " was" : " were") + " not read: ";
  std::size_t shown = 0;
  for (const auto& [name, n] : counts) {
    if (shown == listed) {
      text += ", and " + std::to_string(counts.size() - listed) + " more";
      break;
    }
    if (shown++ > 0) text += ", ";
    text += display_name(name) + " " + std::to_string(n);
  }
  return text;
}

/// The events counted in `counts` (per category, phase or device type).
template <typename key>
std::uint64_t total(const std::map<key, std::uint64_t, std::less<>>& counts) {
  std::uint64_t n = 0;
  for (const auto& entry : counts) n += entry.second;
  return n;
}

/// "3 memory events were not read: 1 [memory] event of 0 bytes, 2 of Device Type 13 (...)" (device types
/// in ascending order; past the first 32, "and N more").
std::string describe_memory_not_read(std::uint64_t zero_bytes, const device_type_counts& devices) {
  constexpr std::size_t listed = 32;
  const std::uint64_t events = zero_bytes + total(devices);
  std::string text = plural(events, "memory event", "memory events") + (events == 1 ? " was" : " were") + " not read: ";
  if (zero_bytes != 0) text += plural(zero_bytes, "[memory] event", "[memory] events") + " of 0 bytes";
  std::size_t shown = 0;
  for (const auto& [device_type, n] : devices) {
    if (shown == listed) {
      text += ", and " + std::to_string(devices.size() - listed) + " more device types";
      break;
    }
    if (shown++ > 0 || zero_bytes != 0) text += ", ";
    text += std::to_string(n) + " of Device Type " + std::to_string(device_type);
  }
  return text + " (regionprof reads the [memory] and [OutOfMemory] events of CPU memory, Device Type 0, and CUDA "
                "memory, Device Type 1; a [memory] event of 0 bytes allocates and frees nothing)";
}

/// PyTorch 1.8 wrote CPU tids as quoted decimals ("tid": "123"): such a string is that number, so
/// the threads of a 1.8 trace are those of the same trace written by 1.9 or later. Only the
/// canonical form (what std::to_string writes) counts; "007" or "+7" stay strings.
std::optional<std::int64_t> decimal_id(std::string_view text) noexcept {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  const std::string_view digits = text.front() == '-' ? text.substr(1) : text;
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0') || text == "-0") return std::nullopt;
  return n;
}

/// FNV-1a: a stable hash for synthetic pid/tid numbers of string ids.
std::uint64_t fnv1a(std::string_view text) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

void kineto_mapper::fail_event(const char* start, const std::string& problem) const {
  errors_.fail(reader_.offset_of(start), "traceEvents[" + std::to_string(event_index_ - 1) + "]: " + problem);
}

void kineto_mapper::require_types(const pending_event& event, std::uint32_t used, const char* start) const {
  const std::uint32_t bad = event.bad & used;
  if (bad == 0) return;
  const auto bit = static_cast<std::size_t>(std::countr_zero(bad));
  fail_event(start, "'" + std::string(field_rules[bit].first) + "' " + std::string(field_rules[bit].second));
}

name_id kineto_mapper::intern(std::string_view text) {
  // Multiplying carries a difference in any input bit only upwards, so the slot is taken from
  // the top bits (names often differ in their last byte only: "...Backward0" / "...Backward1").
  std::uint64_t h = text.size();
  if (text.size() >= 8) {
    std::uint64_t head = 0, middle = 0, tail = 0;
    std::memcpy(&head, text.data(), 8);
    std::memcpy(&middle, text.data() + text.size() / 2 - 4, 8);
    std::memcpy(&tail, text.data() + text.size() - 8, 8);
    h = ((((h ^ head) * 0x9e3779b97f4a7c15ULL) ^ middle) * 0xc2b2ae3d27d4eb4fULL ^ tail) * 0x165667b19e3779f9ULL;
  } else {
    for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    h *= 0x9e3779b97f4a7c15ULL;
  }
  static_assert(std::has_single_bit(name_cache_size));
  name_slot& slot = name_cache_[h >> (64 - std::countr_zero(name_cache_size))];
  if (slot.text == text) {  // not memcmp: an unused slot's data() is null (UB even for 0 bytes)
    return slot.id;
  }
  slot.id = trace_.strings.intern(text);
  slot.text = trace_.strings.view(slot.id);
  return slot.id;
}

std::int64_t kineto_mapper::resolve_id(const id_text& id) {
  if (!id.is_string) return id.number;
  if (const auto number = decimal_id(id.text)) return *number;
  if (auto found = synthetic_ids_.find(id.text); found != synthetic_ids_.end()) return found->second;
  // Stable: a hash of the string, placed at or below -2^46 (far from real pids, tids and Kineto's -1);
  // a collision moves down deterministically in order of first appearance.
  auto number = -static_cast<std::int64_t>((fnv1a(id.text) & ((std::uint64_t{1} << 46) - 1)) + (std::uint64_t{1} << 46));
  while (!synthetic_used_.emplace(number).second) --number;
  synthetic_ids_.emplace(std::string(id.text), number);
  return number;
}

thread_index kineto_mapper::thread_of(const pending_event& event) {
  const std::pair<std::int64_t, std::int64_t> key{resolve_id(event.pid), resolve_id(event.tid)};
  if (last_thread_ && last_thread_key_ == key) return *last_thread_;
  auto found = thread_by_id_.find(key);
  if (found == thread_by_id_.end()) {
    const auto index = static_cast<thread_index>(trace_.threads.size());
    trace_.threads.push_back({key.first, key.second, 0});
    found = thread_by_id_.emplace(key, index).first;
    // A string id names the thread unless thread_name metadata does; a decimal one is a number.
    const bool tid_names = event.tid.is_string && !decimal_id(event.tid.text);
    const bool pid_names = event.pid.is_string && !decimal_id(event.pid.text);
    if (tid_names) fallback_names_.emplace(index, std::string(event.tid.text));
    else if (pid_names) fallback_names_.emplace(index, std::string(event.pid.text));
  }
  last_thread_key_ = key;
  last_thread_ = found->second;
  return found->second;
}

void kineto_mapper::commit(const pending_event& event, const char* start) {
  ++event_index_;
  if (event.not_object) {
    fail_event(start, "an event must be an object, found " + std::string(type_name(event.type)));
  }
  require_types(event, f_ph, start);
  if (!event.present(f_ph)) {
    count(unsupported_phases_, "(no phase)");
    return;
  }
  if (event.ph == "X") {
    require_types(event, f_cat, start);
    const cat_info info = event.present(f_cat) ? classify(event.cat) : cat_info{};
    if (info.cls == cat_class::cpu) {
      require_types(event, f_name | f_ts | f_dur | f_pid | f_tid | f_args | f_domain |
                               (is_api_call(info.cpu_kind) ? std::uint32_t{f_correlation} : 0u),
                    start);
      add_interval(event, start, info.cpu_kind);
    } else if (info.cls == cat_class::device) {
      require_types(event, f_name | f_ts | f_dur | f_pid | f_tid | f_args | f_correlation | f_device | f_stream |
                               f_bytes,
                    start);
      add_device_op(event, start, info.device_kind);
    } else if (info.cls == cat_class::unknown) {
      count(unknown_categories_, event.present(f_cat) ? event.cat : std::string_view("(no category)"));
    }
    return;
  }
  if (event.ph == "i" || event.ph == "I") {
    // torch.profiler's memory events (profile_memory=True); other instants carry nothing to attribute.
    if (event.present(f_name) && (event.name == "[memory]" || event.name == "[OutOfMemory]")) {
      add_memory_event(event, start, event.name == "[OutOfMemory]");
    }
    return;
  }
  if (event.ph == "M") {
    if (event.present(f_name) && event.name == "thread_name") {
      require_types(event, f_pid | f_tid | f_args | f_meta_name, start);
      if (event.present(f_meta_name) && event.present(f_pid) && event.present(f_tid)) {
        thread_names_[{resolve_id(event.pid), resolve_id(event.tid)}] = std::string(event.meta_name);
      }
    }
    return;
  }
  if (!is_non_interval_phase(event.ph)) count(unsupported_phases_, event.ph);
}

// Inlined into both callers: every imported event reads its ts here.
[[gnu::always_inline]] inline std::int64_t kineto_mapper::read_ts(const pending_event& event, const char* start) const {
  std::int64_t ts = 0;
  if (!json_detail::microseconds_to_ns_fast(event.ts, ts)) {
    const auto exact = microseconds_text_to_ns(event.ts);
    if (!exact) {
      fail_event(start, "'ts' " + quote_text(event.ts) + " is not a number of microseconds that fits in int64 ns");
    }
    ts = *exact;
  }
  return ts;
}

bool kineto_mapper::read_times(const pending_event& event, const char* start, std::int64_t& begin_ns, std::int64_t& end_ns) {
  if (!event.present(f_ts)) fail_event(start, "complete event ('ph': 'X') without 'ts'");
  if (!event.present(f_dur)) fail_event(start, "complete event ('ph': 'X') without 'dur'");
  const std::int64_t ts = read_ts(event, start);
  std::int64_t dur = 0;
  if (!json_detail::microseconds_to_ns_fast(event.dur, dur)) {
    const auto exact = microseconds_text_to_ns(event.dur);
    if (!exact) fail_event(start, "'dur' " + quote_text(event.dur) + " is not a number of microseconds that fits in int64 ns");
    dur = *exact;
  }
  if (dur < 0) {
    ++negative_durations_;
    return false;
  }
  if (__builtin_add_overflow(ts, dur, &end_ns)) fail_event(start, "'ts' + 'dur' overflows int64 ns");
  begin_ns = ts;
  return true;
}

void kineto_mapper::add_interval(const pending_event& event, const char* start, interval_kind kind) {
  if (!event.present(f_pid)) fail_event(start, "complete event without 'pid'");
  if (!event.present(f_tid)) fail_event(start, "complete event without 'tid'");
  cpu_interval interval;
  if (!read_times(event, start, interval.start_ns, interval.end_ns)) return;
  interval.name = intern(event.present(f_name) ? event.name : std::string_view{});
  interval.thread = thread_of(event);
  interval.kind = kind;
  if (is_api_call(kind) && event.present(f_correlation)) {
    if (event.correlation > std::numeric_limits<std::uint32_t>::max()) {
      fail_event(start, "'args.correlation' " + std::to_string(event.correlation) + " does not fit in 32 bits");
    }
    interval.correlation_id = static_cast<std::uint32_t>(event.correlation);
  }
  if (event.present(f_domain)) interval.domain = restore_domain(trace_, event.domain);
  trace_.intervals.push_back(interval);
}

void kineto_mapper::add_device_op(const pending_event& event, const char* start, device_op_kind kind) {
  device_op op;
  if (!read_times(event, start, op.start_ns, op.end_ns)) return;
  std::uint64_t device = 0;
  if (event.present(f_device)) {
    device = event.device;
  } else if (event.present(f_pid) && !event.pid.is_string && event.pid.number >= 0) {
    device = static_cast<std::uint64_t>(event.pid.number);
  } else {
    fail_event(start, "device event without 'args.device' and without a non-negative integer 'pid'");
  }
  if (device > std::numeric_limits<std::uint16_t>::max()) {
    fail_event(start, "device " + std::to_string(device) + " is out of range (0..65535)");
  }
  std::uint64_t stream = 0;
  if (event.present(f_stream)) {
    stream = event.stream;
  } else if (event.present(f_tid) && !event.tid.is_string && event.tid.number >= 0) {
    stream = static_cast<std::uint64_t>(event.tid.number);
  } else {
    fail_event(start, "device event without 'args.stream' and without a non-negative integer 'tid'");
  }
  if (stream > std::numeric_limits<std::uint32_t>::max()) {
    fail_event(start, "stream " + std::to_string(stream) + " is out of range (32 bits)");
  }
  if (event.present(f_correlation) && event.correlation > std::numeric_limits<std::uint32_t>::max()) {
    fail_event(start, "'args.correlation' " + std::to_string(event.correlation) + " does not fit in 32 bits");
  }
  op.name = intern(event.present(f_name) ? event.name : std::string_view{});
  op.device = static_cast<std::uint16_t>(device);
  op.stream = static_cast<std::uint32_t>(stream);
  op.correlation_id = event.present(f_correlation) ? static_cast<std::uint32_t>(event.correlation) : 0;
  op.bytes = event.present(f_bytes) ? event.bytes : 0;
  op.kind = kind;
  trace_.device_ops.push_back(op);
  if (event.present(f_graph) && event.graph != 0) ++graph_replay_ops_;
}

void kineto_mapper::add_memory_event(const pending_event& event, const char* start, bool out_of_memory) {
  // torch.profiler writes c10::DeviceType; ROCm builds report HIP memory as CUDA (1).
  constexpr std::int64_t torch_cpu = 0;
  constexpr std::int64_t torch_cuda = 1;
  const std::string_view what = out_of_memory ? "an [OutOfMemory] event" : "a [memory] event";
  require_types(event, f_args | f_device_type, start);
  if (!event.present(f_device_type)) fail_event(start, std::string(what) + " without 'args.Device Type'");
  if (event.device_type != torch_cpu && event.device_type != torch_cuda) {
    ++other_device_memory_events_[event.device_type];
    return;
  }
  require_types(event, f_ts | f_pid | f_tid | f_memory_bytes | f_total_allocated, start);
  if (!event.present(f_ts)) fail_event(start, std::string(what) + " without 'ts'");
  if (!event.present(f_pid)) fail_event(start, std::string(what) + " without 'pid'");
  if (!event.present(f_tid)) fail_event(start, std::string(what) + " without 'tid'");
  if (!event.present(f_memory_bytes)) fail_event(start, std::string(what) + " without 'args.Bytes'");
  memory_event memory;
  if (event.device_type == torch_cuda) {
    require_types(event, f_device_id, start);
    if (!event.present(f_device_id)) fail_event(start, std::string(what) + " of CUDA memory without 'args.Device Id'");
    if (event.device_id < 0 || event.device_id > std::numeric_limits<memory_device>::max()) {
      fail_event(start, "'args.Device Id' " + std::to_string(event.device_id) + " of " + std::string(what) +
                            " of CUDA memory is out of range (0..32767)");
    }
    memory.device = static_cast<memory_device>(event.device_id);
  }  // CPU memory: torch writes Device Id -1; the device is `cpu` whatever it says
  if (out_of_memory) {
    if (event.memory_bytes < 0) {
      fail_event(start, "'args.Bytes' " + std::to_string(event.memory_bytes) + " of " + std::string(what) +
                            " must be the bytes asked for, not negative");
    }
    memory.kind = memory_event_kind::out_of_memory;
  } else if (event.memory_bytes > 0) {
    memory.kind = memory_event_kind::allocation;
  } else if (event.memory_bytes < 0) {
    if (event.memory_bytes == std::numeric_limits<std::int64_t>::min()) {
      fail_event(start, "'args.Bytes' " + std::to_string(event.memory_bytes) + " of " + std::string(what) +
                            " is out of range (a free of more than 2^63 - 1 bytes)");
    }
    memory.kind = memory_event_kind::free;
  } else {
    ++zero_byte_memory_events_;
    return;
  }
  memory.bytes = event.memory_bytes;
  if (event.present(f_total_allocated)) {
    if (event.total_allocated > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_event(start, "'args.Total Allocated' " + std::to_string(event.total_allocated) + " of " + std::string(what) +
                            " does not fit in int64");
    }
    memory.total_allocated = static_cast<std::int64_t>(event.total_allocated);
  }
  memory.time_ns = read_ts(event, start);
  memory.thread = thread_of(event);
  trace_.memory_events.push_back(memory);
}

trace kineto_mapper::finish(const boost::json::object& target_extra, const boost::json::object* own,
                            std::uint64_t own_offset) {
  for (std::size_t i = 0; i < trace_.threads.size(); ++i) {
    auto& thread = trace_.threads[i];
    if (auto named = thread_names_.find({thread.pid, thread.tid}); named != thread_names_.end()) {
      thread.name = trace_.strings.intern(named->second);
    } else if (auto fallback = fallback_names_.find(static_cast<thread_index>(i)); fallback != fallback_names_.end()) {
      thread.name = trace_.strings.intern(fallback->second);
    }
  }
  trace_.target.type = "kineto_trace";
  // Kineto writes deviceProperties whenever it was built with CUPTI (or ROCm): torch.profiler 2.x
  // writes "deviceProperties": [] for a CPU-only profile, so only a non-empty array says a device
  // was traced. regionprof's own 'regionprof' object, restored below, overrides this.
  const auto* properties = target_extra.if_contains("deviceProperties");
  const bool has_properties = properties != nullptr && properties->is_array() && !properties->as_array().empty();
  trace_.device_tracing = !trace_.device_ops.empty() || has_properties;
  for (const auto& member : target_extra) trace_detail::add_target_member(trace_.target, member.key(), member.value());
  if (own != nullptr) restore_regionprof_metadata(trace_, *own, errors_, own_offset);

  // Events the file holds but regionprof does not read are ignored, not lost: IGNORED_EVENTS.
  // Events of a read category that could not be kept are lost: DROPPED_HOST_RECORDS.
  if (const std::uint64_t unknown = total(unknown_categories_); unknown != 0) {
    trace_.warnings.push_back(
        {warning_code::ignored_events, warning_source::import,
         describe_not_read(unknown_categories_, unknown, "category", "categories") +
             " (regionprof reads the complete events of cpu_op, user_annotation, python_function, cuda_runtime, "
             "cuda_driver, kernel, gpu_memcpy, gpu_memset and PyTorch 1.8/1.9's Operator, Runtime, Kernel, Memcpy, "
             "Memset)"});
  }
  if (const std::uint64_t phases = total(unsupported_phases_); phases != 0) {
    trace_.warnings.push_back(
        {warning_code::ignored_events, warning_source::import,
         describe_not_read(unsupported_phases_, phases, "phase", "phases") +
             " (regionprof reads complete events, ph X; write begin/end pairs as complete events)"});
  }
  if (const std::uint64_t other = total(other_device_memory_events_); zero_byte_memory_events_ + other != 0) {
    trace_.warnings.push_back({warning_code::ignored_events, warning_source::import,
                               describe_memory_not_read(zero_byte_memory_events_, other_device_memory_events_)});
  }
  if (negative_durations_ != 0) {
    trace_.warnings.push_back({warning_code::dropped_host_records, warning_source::import,
                               "dropped " + plural(negative_durations_, "complete event", "complete events") +
                                   " of read categories with a negative 'dur'"});
  }
  if (graph_replay_ops_ != 0) {
    trace_.warnings.push_back(
        {warning_code::graph_replay_kernels, warning_source::import,
         plural(graph_replay_ops_, "device op", "device ops") +
             " of CUDA graph replays (args 'graph node id') belong to the region around their graph launch: a "
             "trace holds no capture map (docs/design.md, rule 15); profile with regionprof for capture-time "
             "attribution"});
  }
  return std::move(trace_);
}

}  // namespace regionprof::import_detail
