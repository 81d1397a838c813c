// One traceEvents element as the scanner read it: the fields the mapping uses, their presence and
// type problems. Shared by the event scanner (event_scan.cpp) and the mapping (kineto_mapping.cpp).
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace regionprof::import_detail {

namespace od = simdjson::ondemand;

/// pid or tid as written: a number or a string.
struct id_text {
  bool is_string;
  std::int64_t number;
  std::string_view text;  // the string form
};

/// Fields of an event, for per-field type problems (bits of pending_event::bad).
enum field_bit : std::uint32_t {
  f_ph = 1 << 0, f_cat = 1 << 1, f_name = 1 << 2, f_ts = 1 << 3, f_dur = 1 << 4, f_pid = 1 << 5,
  f_tid = 1 << 6, f_args = 1 << 7, f_correlation = 1 << 8, f_device = 1 << 9, f_stream = 1 << 10,
  f_bytes = 1 << 11, f_domain = 1 << 12, f_meta_name = 1 << 13, f_graph = 1 << 14,
  // torch's [memory] and [OutOfMemory] instant events
  f_device_type = 1 << 15, f_device_id = 1 << 16, f_memory_bytes = 1 << 17, f_total_allocated = 1 << 18,
};

/// What each field must be, by bit position.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 19> field_rules{{
    {"ph", "must be a string"},
    {"cat", "must be a string"},
    {"name", "must be a string"},
    {"ts", "must be a number (microseconds)"},
    {"dur", "must be a number (microseconds)"},
    {"pid", "must be an integer or a string"},
    {"tid", "must be an integer or a string"},
    {"args", "must be an object"},
    {"args.correlation", "must be a non-negative integer"},
    {"args.device", "must be a non-negative integer"},
    {"args.stream", "must be a non-negative integer"},
    {"args.bytes", "must be a non-negative integer"},
    {"args.domain", "must be a string"},
    {"args.name", "must be a string"},
    {"args.graph node id", "must be a non-negative integer"},
    {"args.Device Type", "must be an integer"},
    {"args.Device Id", "must be an integer"},
    {"args.Bytes", "must be an integer"},
    {"args.Total Allocated", "must be a non-negative integer"},
}};

/// The fields of one event that matter, as read; committed only once the event's object closed.
/// Views point into the window or the parser's string buffer: valid until the next window.
/// A field is valid only when its bit is set in `has` (one object is reused for every event, so
/// resetting it is two stores, not clearing 250 bytes). A field of the wrong type sets its bit in
/// `bad` instead; it is an error only where the field is used (an odd `args.name` on a kernel is
/// nobody's business).
struct pending_event {
  std::string_view ph, cat, name, ts, dur, domain, meta_name;
  id_text pid, tid;
  std::uint64_t correlation, device, stream, bytes;
  std::uint64_t graph;  ///< `graph node id` (or `graph id`) of a graph replay's op; valid with f_graph
  std::int64_t device_type;      ///< `Device Type` of a memory event: c10::DeviceType (0 CPU, 1 CUDA)
  std::int64_t device_id;        ///< `Device Id` of a memory event: the CUDA ordinal; -1 on the CPU
  std::int64_t memory_bytes;     ///< `Bytes` of a memory event: + allocated, - freed, or asked for
  std::uint64_t total_allocated;  ///< `Total Allocated` of a memory event: the device's total after it, bytes
  std::uint32_t has = 0;
  std::uint32_t bad = 0;
  bool not_object = false;
  od::json_type type = od::json_type::object;

  void reset() noexcept {
    has = 0;
    bad = 0;
    not_object = false;
  }
  bool present(field_bit field) const noexcept { return (has & field) != 0; }
};

/// A JSON type for messages ("an event must be an object, found an array").
inline std::string_view type_name(od::json_type type) noexcept {
  switch (type) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "a value";
}

}  // namespace regionprof::import_detail
