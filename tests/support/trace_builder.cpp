#include "support/trace_builder.hpp"

#include <stdexcept>
#include <utility>

#include <boost/json.hpp>

#include "regionprof/trace/run_target_json.hpp"

namespace regionprof::test {

trace_builder& trace_builder::thread(std::int64_t tid, std::string_view name, std::int64_t pid) {
  current_ = trace_.add_thread(pid, tid, name);
  has_thread_ = true;
  return *this;
}

thread_index trace_builder::current_thread() {
  if (!has_thread_) thread(1);
  return current_;
}

trace_builder& trace_builder::interval(interval_kind kind, std::string_view name, std::int64_t start,
                                       std::int64_t end, std::uint32_t correlation, std::string_view domain) {
  cpu_interval interval;
  interval.start_ns = start;
  interval.end_ns = end;
  interval.name = trace_.strings.intern(name);
  interval.thread = current_thread();
  interval.correlation_id = correlation;
  interval.domain = trace_.domain(domain);
  interval.kind = kind;
  trace_.intervals.push_back(interval);
  return *this;
}

trace_builder& trace_builder::range(std::string_view name, std::int64_t start, std::int64_t end,
                                    std::string_view domain) {
  return interval(interval_kind::range, name, start, end, 0, domain);
}

trace_builder& trace_builder::marker(std::int64_t start, std::int64_t end) {
  return range(marker_name, start, end, marker_domain);
}

trace_builder& trace_builder::cpu_op(std::string_view name, std::int64_t start, std::int64_t end) {
  return interval(interval_kind::cpu_op, name, start, end, 0, {});
}

trace_builder& trace_builder::python_function(std::string_view name, std::int64_t start, std::int64_t end) {
  return interval(interval_kind::python_function, name, start, end, 0, {});
}

trace_builder& trace_builder::api(std::string_view name, std::int64_t start, std::int64_t end,
                                  std::uint32_t correlation) {
  return interval(interval_kind::runtime_api, name, start, end, correlation, {});
}

trace_builder& trace_builder::driver_api(std::string_view name, std::int64_t start, std::int64_t end,
                                         std::uint32_t correlation) {
  return interval(interval_kind::driver_api, name, start, end, correlation, {});
}

trace_builder& trace_builder::launch(std::int64_t start, std::int64_t end, std::uint32_t correlation) {
  return api("cudaLaunchKernel", start, end, correlation);
}

trace_builder& trace_builder::op(device_op_kind kind, std::string_view name, std::int64_t start, std::int64_t end,
                                 std::uint32_t correlation, std::uint64_t bytes, std::uint32_t stream,
                                 std::uint16_t device) {
  device_op op;
  op.start_ns = start;
  op.end_ns = end;
  op.bytes = bytes;
  op.name = trace_.strings.intern(name);
  op.correlation_id = correlation;
  op.stream = stream;
  op.device = device;
  op.kind = kind;
  trace_.device_ops.push_back(op);
  trace_.device_tracing = true;
  return *this;
}

trace_builder& trace_builder::kernel(std::string_view name, std::int64_t start, std::int64_t end,
                                     std::uint32_t correlation, std::uint32_t stream, std::uint16_t device) {
  return op(device_op_kind::kernel, name, start, end, correlation, 0, stream, device);
}

trace_builder& trace_builder::memcpy(std::string_view name, std::int64_t start, std::int64_t end,
                                     std::uint32_t correlation, std::uint64_t bytes, std::uint32_t stream,
                                     std::uint16_t device) {
  return op(device_op_kind::memcpy, name, start, end, correlation, bytes, stream, device);
}

trace_builder& trace_builder::memset(std::string_view name, std::int64_t start, std::int64_t end,
                                     std::uint32_t correlation, std::uint64_t bytes, std::uint32_t stream,
                                     std::uint16_t device) {
  return op(device_op_kind::memset, name, start, end, correlation, bytes, stream, device);
}

trace_builder& trace_builder::memory(std::int64_t time, std::int64_t bytes, std::optional<std::int64_t> total,
                                     memory_device device) {
  trace_.memory_events.push_back({.time_ns = time,
                                  .bytes = bytes,
                                  .total_allocated = total.value_or(memory_event::no_total),
                                  .thread = current_thread(),
                                  .device = device,
                                  .kind = bytes > 0 ? memory_event_kind::allocation : memory_event_kind::free});
  return *this;
}

trace_builder& trace_builder::out_of_memory(std::int64_t time, std::int64_t bytes, std::optional<std::int64_t> total,
                                            memory_device device) {
  memory(time, bytes, total, device);
  trace_.memory_events.back().kind = memory_event_kind::out_of_memory;
  return *this;
}

trace_builder& trace_builder::work(const declared_work& declared) {
  if (trace_.intervals.empty()) throw std::logic_error("trace_builder::work: no interval to declare work for");
  trace_.declared_work.push_back({static_cast<std::uint32_t>(trace_.intervals.size() - 1), declared});
  return *this;
}

trace_builder& trace_builder::device_tracing(bool on) {
  trace_.device_tracing = on;
  return *this;
}

trace_builder& trace_builder::wall_times(std::vector<std::int64_t> run_wall_times_ns) {
  trace_.run_wall_times_ns = std::move(run_wall_times_ns);
  return *this;
}

trace_builder& trace_builder::module_type(std::string_view region_id, std::string_view type_name) {
  trace_.module_types[std::string(region_id)] = std::string(type_name);
  return *this;
}

trace_builder& trace_builder::warning(warning_code code, warning_source source, std::string_view message) {
  trace_.warnings.push_back({code, source, std::string(message)});
  return *this;
}

trace_builder& trace_builder::target(std::string_view type, std::string_view members_json) {
  trace_.target = target_of(type, members_json);
  return *this;
}

run_target target_of(std::string_view type, std::string_view members_json) {
  run_target target;
  target.type = std::string(type);
  if (members_json.empty()) return target;
  const boost::json::value members = boost::json::parse(members_json);
  for (const auto& member : members.as_object()) {
    trace_detail::add_target_member(target, member.key(), member.value());
  }
  return target;
}

std::string members_json(const run_target& target) { return boost::json::serialize(trace_detail::target_members(target)); }

}  // namespace regionprof::test
