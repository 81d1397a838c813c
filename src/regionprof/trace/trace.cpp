#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "regionprof/trace/trace.hpp"

namespace regionprof {

namespace {
void add_saturating(std::optional<std::uint64_t>& sum, const std::optional<std::uint64_t>& part) noexcept {
  if (!part) return;
  const std::uint64_t base = sum.value_or(0);
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  sum = *part > max - base ? max : base + *part;
}
}  // namespace

declared_work& declared_work::operator+=(const declared_work& other) noexcept {
  add_saturating(bytes, other.bytes);
  add_saturating(flops, other.flops);
  add_saturating(items, other.items);
  return *this;
}

domain_index trace::domain(std::string_view name) {
  const name_id id = strings.intern(name);
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i] == id) return static_cast<domain_index>(i);
  }
  if (domains.size() > 0xffff) {
    throw std::length_error("regionprof: more than 65535 NVTX domains in one trace (domain '" +
                            std::string(name) + "')");
  }
  domains.push_back(id);
  return static_cast<domain_index>(domains.size() - 1);
}

thread_index trace::add_thread(std::int64_t pid, std::int64_t tid, std::string_view name) {
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].pid == pid && threads[i].tid == tid) {
      if (!name.empty() && threads[i].name == 0) threads[i].name = strings.intern(name);
      return static_cast<thread_index>(i);
    }
  }
  threads.push_back({pid, tid, name.empty() ? name_id{0} : strings.intern(name)});
  return static_cast<thread_index>(threads.size() - 1);
}

std::string memory_device_key(memory_device device) {
  return device == cpu_memory ? std::string("cpu") : "cuda:" + std::to_string(device);
}

std::optional<memory_device> parse_memory_device_key(std::string_view key) {
  if (key == "cpu") return cpu_memory;
  constexpr std::string_view prefix = "cuda:";
  if (key.size() <= prefix.size() || key.size() > prefix.size() + 5 || key.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  int value = 0;
  for (char c : key.substr(prefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > std::numeric_limits<memory_device>::max() || (key[prefix.size()] == '0' && key.size() > prefix.size() + 1)) {
    return std::nullopt;
  }
  return static_cast<memory_device>(value);
}

std::string trace::time_range_problem() const {
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  // Differences of int64 times as uint64: exact (< 2^64) whenever end > start.
  const auto distance = [](std::int64_t from, std::int64_t to) {
    return static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
  };
  std::uint64_t durations = 0;  // stops growing past the limit, so it cannot wrap
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  const auto add = [&](std::int64_t start, std::int64_t end) {
    if (end > start && durations <= limit) durations += std::min(distance(start, end), limit + 1);
    first = std::min({first, start, end});
    last = std::max({last, start, end});
  };
  for (const cpu_interval& i : intervals) add(i.start_ns, i.end_ns);
  for (const device_op& op : device_ops) add(op.start_ns, op.end_ns);
  for (const memory_event& event : memory_events) add(event.time_ns, event.time_ns);
  if (durations > limit) {
    return "the durations of its intervals and device ops add up to more than 2^62 ns (146 years); "
           "its times are not nanoseconds of one clock";
  }
  if (last > first && distance(first, last) > limit) {
    return "its times span more than 2^62 ns (146 years), from " + std::to_string(first) + " to " +
           std::to_string(last) + " ns; they are not nanoseconds of one clock";
  }
  return {};
}

}  // namespace regionprof
