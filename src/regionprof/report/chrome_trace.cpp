// Chrome trace export in Kineto's conventions; the format contract is in regionprof/report/report.hpp.
//
// Streamed through the one event writer (report/chrome_events.hpp): a 10-million-event trace costs its
// 1 MiB buffer plus a few arrays of correlation ids, never a DOM.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/chrome_events.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/run_target_json.hpp"

namespace regionprof {
namespace {

using report_detail::append_json_string;
using report_detail::append_uint;

/// Top-level names this format uses itself; a target member of the same name is not written.
bool is_reserved_top_level(std::string_view key) {
  return key == "schemaVersion" || key == "displayTimeUnit" || key == "traceEvents" || key == "regionprof";
}

std::string_view category(interval_kind kind) {
  switch (kind) {
    case interval_kind::range: return "user_annotation";
    case interval_kind::cpu_op: return "cpu_op";
    case interval_kind::python_function: return "python_function";
    case interval_kind::runtime_api: return "cuda_runtime";
    case interval_kind::driver_api: return "cuda_driver";
  }
  throw std::invalid_argument("regionprof::write_chrome_trace: unknown interval_kind " +
                              std::to_string(static_cast<int>(kind)));
}

std::string_view category(device_op_kind kind) {
  switch (kind) {
    case device_op_kind::kernel: return "kernel";
    case device_op_kind::memcpy: return "gpu_memcpy";
    case device_op_kind::memset: return "gpu_memset";
  }
  throw std::invalid_argument("regionprof::write_chrome_trace: unknown device_op_kind " +
                              std::to_string(static_cast<int>(kind)));
}

/// Kineto's instant of a memory event: torch.profiler's `[memory]` (allocations and frees) or `[OutOfMemory]`.
std::string_view memory_event_name(memory_event_kind kind) {
  switch (kind) {
    case memory_event_kind::allocation:
    case memory_event_kind::free: return "[memory]";
    case memory_event_kind::out_of_memory: return "[OutOfMemory]";
  }
  throw std::invalid_argument("regionprof::write_chrome_trace: unknown memory_event_kind " +
                              std::to_string(static_cast<int>(kind)));
}

/// Why `event` breaks trace.hpp's invariants of a memory event (which the importer relies on to read it
/// back as it was), or empty. Its kind is known (memory_event_name).
std::string memory_event_problem(const memory_event& event) {
  if (event.device < cpu_memory) return "device " + std::to_string(event.device) + " (cpu is -1, cuda:N is N)";
  if (memory_event_fits(event.kind, event.bytes, event.total_allocated)) return {};
  if (event.total_allocated != memory_event::no_total && event.total_allocated < 0) {
    return "a negative total_allocated " + std::to_string(event.total_allocated);
  }
  const std::string_view rule = event.kind == memory_event_kind::allocation ? "for an allocation (> 0)"
                                : event.kind == memory_event_kind::free     ? "for a free (< 0 and > -2^63)"
                                                                            : "for a failed allocation (>= 0)";
  return "bytes " + std::to_string(event.bytes) + " " + std::string(rule);
}

std::vector<std::uint32_t> sorted_unique(std::vector<std::uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

class chrome_writer {
 public:
  chrome_writer(const trace& source, std::ostream& out)
      : source_(source), events_(out, "regionprof::write_chrome_trace"), buffer_(events_.text()) {
    name_state_.assign(source.strings.size(), name_unknown);
  }

  void write() {
    validate();  // before anything is written: a bad trace leaves the stream untouched
    write_header();
    write_metadata();
    link_correlations();
    write_intervals();
    write_device_ops();
    write_memory_events();
    write_memory_counters();
    events_.finish();
  }

 private:
  enum : std::uint8_t { name_unknown = 0, name_plain = 1, name_escaped = 2 };

  void write_header() {
    buffer_ += "{\"schemaVersion\":1";
    for (const auto& member : trace_detail::target_members(source_.target)) {
      const std::string_view key(member.key().data(), member.key().size());
      if (is_reserved_top_level(key)) continue;
      buffer_ += ",\n";
      append_json_string(buffer_, key);
      buffer_ += ':';
      report_detail::append_json(buffer_, member.value());
    }
    buffer_ += ",\n\"displayTimeUnit\":\"ns\",\n\"regionprof\":";
    report_detail::append_json(buffer_, regionprof_object());
    buffer_ += ",\n\"traceEvents\":[";
  }

  boost::json::value regionprof_object() const {
    boost::json::object object;
    object["schema_version"] = 1;
    object["target_type"] = boost::json::string_view(source_.target.type.data(), source_.target.type.size());
    object["device_tracing"] = source_.device_tracing;
    boost::json::array walls;
    for (std::int64_t ns : source_.run_wall_times_ns) walls.push_back(ns);
    object["run_wall_times_ns"] = std::move(walls);
    boost::json::object module_types;
    for (const auto& [region, type] : source_.module_types) {
      module_types[boost::json::string_view(region.data(), region.size())] =
          boost::json::string_view(type.data(), type.size());
    }
    object["module_types"] = std::move(module_types);
    boost::json::array warnings;
    for (const warning& item : source_.warnings) {
      boost::json::object entry;
      const std::string_view code = to_string(item.code);
      const std::string_view origin = to_string(item.source);
      entry["code"] = boost::json::string_view(code.data(), code.size());
      entry["source"] = boost::json::string_view(origin.data(), origin.size());
      entry["message"] = boost::json::string_view(item.message.data(), item.message.size());
      warnings.push_back(std::move(entry));
    }
    object["warnings"] = std::move(warnings);
    return object;
  }

  /// thread_name for each named CPU thread (in thread order); for each device a process_name
  /// "GPU <device>" and for each of its streams a thread_name "stream <stream>", sorted by number.
  void write_metadata() {
    for (const thread_info& thread : source_.threads) {
      if (thread.name == 0) continue;
      events_.metadata_event("thread_name", thread.pid, thread.tid);
      append_name(thread.name);
      buffer_ += "}}";
    }
    std::unordered_set<std::uint64_t> seen;
    std::uint64_t last = ~std::uint64_t{0};
    for (const device_op& op : source_.device_ops) {
      const std::uint64_t key = std::uint64_t{op.device} << 32 | op.stream;
      if (key == last) continue;
      last = key;
      seen.insert(key);
    }
    std::vector<std::uint64_t> tracks(seen.begin(), seen.end());
    std::sort(tracks.begin(), tracks.end());
    std::uint64_t previous_device = ~std::uint64_t{0};
    for (std::uint64_t key : tracks) {
      const std::uint64_t device = key >> 32;
      const std::uint64_t stream = key & 0xffffffffu;
      if (device != previous_device) {
        previous_device = device;
        events_.metadata_event("process_name", static_cast<std::int64_t>(device), 0);
        buffer_ += "\"GPU ";
        append_uint(buffer_, device);
        buffer_ += "\"}}";
      }
      events_.metadata_event("thread_name", static_cast<std::int64_t>(device), static_cast<std::int64_t>(stream));
      buffer_ += "\"stream ";
      append_uint(buffer_, stream);
      buffer_ += "\"}}";
    }
  }

  /// The correlation ids that have both an API call and a device op: these get ac2g flows.
  void link_correlations() {
    std::vector<std::uint32_t> api_ids;
    for (const cpu_interval& interval : source_.intervals) {
      if (is_api_call(interval.kind) && interval.correlation_id != 0) api_ids.push_back(interval.correlation_id);
    }
    api_ids = sorted_unique(std::move(api_ids));
    std::vector<std::uint32_t> op_ids;
    op_ids.reserve(source_.device_ops.size());
    for (const device_op& op : source_.device_ops) {
      if (op.correlation_id != 0) op_ids.push_back(op.correlation_id);
    }
    op_ids = sorted_unique(std::move(op_ids));
    std::set_intersection(api_ids.begin(), api_ids.end(), op_ids.begin(), op_ids.end(), std::back_inserter(linked_));
    flow_started_.assign(linked_.size(), false);
  }

  /// Index of `id` in linked_, or npos.
  std::size_t linked_index(std::uint32_t id) const {
    if (id == 0) return npos;
    const auto found = std::lower_bound(linked_.begin(), linked_.end(), id);
    return found != linked_.end() && *found == id ? static_cast<std::size_t>(found - linked_.begin()) : npos;
  }

  void write_intervals() {
    for (const cpu_interval& interval : source_.intervals) {
      const thread_info& thread = source_.threads[interval.thread];
      complete_event(category(interval.kind), interval.name, thread.pid, thread.tid, interval.start_ns,
                     interval.end_ns);
      const bool api = is_api_call(interval.kind);
      if (api || interval.domain != 0) {
        buffer_ += ",\"args\":{";
        if (api) {
          buffer_ += "\"correlation\":";
          append_uint(buffer_, interval.correlation_id);
        }
        if (interval.domain != 0) {
          if (api) buffer_ += ',';
          buffer_ += "\"domain\":";
          append_name(source_.domains[interval.domain]);
        }
        buffer_ += '}';
      }
      buffer_ += '}';
      if (api) {
        const std::size_t link = linked_index(interval.correlation_id);
        if (link != npos && !flow_started_[link]) {
          flow_started_[link] = true;
          events_.flow_event('s', interval.correlation_id, thread.pid, thread.tid, interval.start_ns);
        }
      }
    }
  }

  void write_device_ops() {
    // trace::graph_ops is in op order: one cursor. Its capture map is not written (rule 15): an
    // imported trace attributes replays by launch and counts them (GRAPH_REPLAY_KERNELS).
    std::size_t graph = 0;
    for (std::size_t index = 0; index < source_.device_ops.size(); ++index) {
      const device_op& op = source_.device_ops[index];
      complete_event(category(op.kind), op.name, op.device, op.stream, op.start_ns, op.end_ns);
      buffer_ += ",\"args\":{\"device\":";
      append_uint(buffer_, op.device);
      buffer_ += ",\"stream\":";
      append_uint(buffer_, op.stream);
      buffer_ += ",\"correlation\":";
      append_uint(buffer_, op.correlation_id);
      if (op.kind != device_op_kind::kernel) {
        buffer_ += ",\"bytes\":";
        append_uint(buffer_, op.bytes);
      }
      while (graph < source_.graph_ops.size() && source_.graph_ops[graph].op < index) ++graph;
      if (graph < source_.graph_ops.size() && source_.graph_ops[graph].op == index) {
        buffer_ += ",\"graph node id\":";
        append_uint(buffer_, source_.graph_ops[graph].graph_node_id);
      }
      buffer_ += "}}";
      if (linked_index(op.correlation_id) != npos) {
        events_.flow_event('f', op.correlation_id, op.device, op.stream, op.start_ns);
      }
    }
  }

  /// Each memory event as torch.profiler writes it: a `[memory]` or `[OutOfMemory]` instant on its thread,
  /// args `Device Type` (0 CPU, 1 CUDA), `Device Id` (-1 on the CPU), `Bytes` and, when known,
  /// `Total Allocated`; torch's `Addr` and `Total Reserved` are not in the trace.
  void write_memory_events() {
    for (const memory_event& event : source_.memory_events) {
      const thread_info& thread = source_.threads[event.thread];
      events_.instant_event("cpu_instant_event", memory_event_name(event.kind), thread.pid, thread.tid, event.time_ns);
      buffer_ += event.device == cpu_memory ? ",\"args\":{\"Device Type\":0" : ",\"args\":{\"Device Type\":1";
      buffer_ += ",\"Device Id\":";
      report_detail::append_int(buffer_, event.device);
      buffer_ += ",\"Bytes\":";
      report_detail::append_int(buffer_, event.bytes);
      if (event.total_allocated != memory_event::no_total) {
        buffer_ += ",\"Total Allocated\":";
        report_detail::append_int(buffer_, event.total_allocated);
      }
      buffer_ += "}}";
    }
  }

  /// The device totals as counter tracks, one per process and device ("Memory cpu", "Memory cuda:0"): a
  /// sample `{"Total Allocated": bytes}` at each memory event that gives a total, by process, device, then
  /// time (equal times in trace order). Derived data: the importer skips counters.
  void write_memory_counters() {
    const auto& memory = source_.memory_events;
    std::vector<std::uint32_t> order;
    for (std::size_t i = 0; i < memory.size(); ++i) {
      if (memory[i].total_allocated != memory_event::no_total) order.push_back(static_cast<std::uint32_t>(i));
    }
    const auto pid_of = [&](std::uint32_t i) { return source_.threads[memory[i].thread].pid; };
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tuple(pid_of(a), memory[a].device, memory[a].time_ns) <
             std::tuple(pid_of(b), memory[b].device, memory[b].time_ns);
    });
    std::string track;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const memory_event& event = memory[order[k]];
      const std::int64_t pid = pid_of(order[k]);
      if (k == 0 || pid != pid_of(order[k - 1]) || event.device != memory[order[k - 1]].device) {
        track = "Memory " + memory_device_key(event.device);
      }
      events_.counter_event(track, pid, event.time_ns);
      buffer_ += ",\"args\":{\"Total Allocated\":";
      report_detail::append_int(buffer_, event.total_allocated);
      buffer_ += "}}";
    }
  }

  /// The event writer's complete event, its name through the per-id classification.
  void complete_event(std::string_view cat, name_id name, std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                      std::int64_t end_ns) {
    events_.complete_event(cat, source_.strings.view(name), name_is_plain(name), pid, tid, start_ns, end_ns - start_ns);
  }

  /// Every index in the trace points into its table (a producer bug otherwise, reported by position).
  void validate() const {
    const auto bad = [](const std::string& what, std::size_t index, std::string_view field, std::size_t value,
                        std::size_t size) {
      throw std::invalid_argument("regionprof::write_chrome_trace: " + what + " " + std::to_string(index) + " has " +
                                  std::string(field) + " " + std::to_string(value) + " but the trace has only " +
                                  std::to_string(size));
    };
    const std::size_t strings = source_.strings.size();
    for (std::size_t i = 0; i < source_.threads.size(); ++i) {
      if (source_.threads[i].name >= strings) bad("thread", i, "name id", source_.threads[i].name, strings);
    }
    for (std::size_t i = 0; i < source_.domains.size(); ++i) {
      if (source_.domains[i] >= strings) bad("domain", i, "name id", source_.domains[i], strings);
    }
    for (std::size_t i = 0; i < source_.intervals.size(); ++i) {
      const cpu_interval& interval = source_.intervals[i];
      if (interval.name >= strings) bad("interval", i, "name id", interval.name, strings);
      if (interval.thread >= source_.threads.size()) {
        bad("interval", i, "thread index", interval.thread, source_.threads.size());
      }
      if (interval.domain >= source_.domains.size()) {
        bad("interval", i, "domain index", interval.domain, source_.domains.size());
      }
      category(interval.kind);
    }
    for (std::size_t i = 0; i < source_.device_ops.size(); ++i) {
      if (source_.device_ops[i].name >= strings) bad("device op", i, "name id", source_.device_ops[i].name, strings);
      category(source_.device_ops[i].kind);
    }
    if (source_.memory_events.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw std::invalid_argument("regionprof::write_chrome_trace: more than 2^32 - 1 memory events");
    }
    for (std::size_t i = 0; i < source_.memory_events.size(); ++i) {
      const memory_event& event = source_.memory_events[i];
      if (event.thread >= source_.threads.size()) {
        bad("memory event", i, "thread index", event.thread, source_.threads.size());
      }
      memory_event_name(event.kind);
      if (std::string problem = memory_event_problem(event); !problem.empty()) {
        throw std::invalid_argument("regionprof::write_chrome_trace: memory event " + std::to_string(i) + " has " +
                                    problem);
      }
    }
  }

  /// Names are classified once per id: plain ones (the vast majority) are copied as they are.
  bool name_is_plain(name_id id) {
    std::uint8_t& state = name_state_[id];
    if (state == name_unknown) {
      state = report_detail::is_plain_json_string(source_.strings.view(id)) ? name_plain : name_escaped;
    }
    return state == name_plain;
  }
  void append_name(name_id id) { events_.string(source_.strings.view(id), name_is_plain(id)); }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  const trace& source_;
  report_detail::chrome_event_writer events_;
  std::string& buffer_;  ///< events_.text(): the header and each event's args
  std::vector<std::uint8_t> name_state_;
  std::vector<std::uint32_t> linked_;
  std::vector<bool> flow_started_;
};

}  // namespace

void write_chrome_trace(const trace& source, std::ostream& out) { chrome_writer(source, out).write(); }

std::string to_chrome_trace(const Profile& profile) {
  std::ostringstream out;
  write_chrome_trace(profile.source(), out);
  return std::move(out).str();
}

}  // namespace regionprof
