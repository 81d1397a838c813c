// Kineto events -> trace: categories and phases decide what an event becomes (a CPU interval, a
// device op, a thread name, or a count in a warning); pid/tid become threads, string ids synthetic
// numbers; names are interned.
#pragma once

#include <array>
#include <boost/json/fwd.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "regionprof/import/kineto_event.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::import_detail {

class input_errors;
class window_reader;

struct pair_hash {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& key) const noexcept {
    const auto a = static_cast<std::uint64_t>(key.first);
    const auto b = static_cast<std::uint64_t>(key.second);
    return static_cast<std::size_t>((a * 0x9e3779b97f4a7c15ULL) ^ (b + 0x7f4a7c159e3779b9ULL + (a << 6)));
  }
};

/// Counts per category or phase, for warnings ("foo 2, gpu_user_annotation_x 10").
using name_counts = std::map<std::string, std::uint64_t, std::less<>>;
/// Counts of memory events per torch `Device Type` (c10::DeviceType), for warnings.
using device_type_counts = std::map<std::int64_t, std::uint64_t, std::less<>>;

/// Builds the trace from the events in traceEvents order.
class kineto_mapper {
 public:
  /// Errors name the event by its offset in `reader`'s current window.
  kineto_mapper(const input_errors& errors, const window_reader& reader) noexcept : errors_(errors), reader_(reader) {}

  /// Events committed so far: the index in traceEvents of the next one.
  std::size_t event_index() const noexcept { return event_index_; }

  /// Maps one event whose object closed; `start` is its first byte in the reader's current window.
  void commit(const pending_event& event, const char* start);

  /// After the last event: thread names, the target (Kineto's `target_extra` members, then the
  /// producer's 'regionprof' object `own` at input offset `own_offset`, when present), warnings.
  trace finish(const boost::json::object& target_extra, const boost::json::object* own, std::uint64_t own_offset);

 private:
  /// Fails for the event being committed (event_index_ - 1).
  [[noreturn]] void fail_event(const char* start, const std::string& problem) const;
  /// Fails when one of the fields in `used` had the wrong type.
  void require_types(const pending_event& event, std::uint32_t used, const char* start) const;
  /// trace::strings.intern behind a small direct-mapped cache: most events repeat a few hundred
  /// names, and probing with 3 words + one memcmp beats hashing a 5 KB kernel name.
  name_id intern(std::string_view text);
  std::int64_t resolve_id(const id_text& id);
  thread_index thread_of(const pending_event& event);
  /// `ts` in ns (present: checked by the caller).
  std::int64_t read_ts(const pending_event& event, const char* start) const;
  /// ts and dur in ns; false when the event is dropped (negative duration, counted).
  bool read_times(const pending_event& event, const char* start, std::int64_t& begin_ns, std::int64_t& end_ns);
  void add_interval(const pending_event& event, const char* start, interval_kind kind);
  void add_device_op(const pending_event& event, const char* start, device_op_kind kind);
  /// A torch `[memory]` (`out_of_memory` false) or `[OutOfMemory]` instant: a memory event, or a count
  /// in the memory events not read.
  void add_memory_event(const pending_event& event, const char* start, bool out_of_memory);

  const input_errors& errors_;
  const window_reader& reader_;
  trace trace_;

  struct name_slot {
    std::string_view text;
    name_id id = 0;
  };
  static constexpr std::size_t name_cache_size = 4096;
  std::array<name_slot, name_cache_size> name_cache_{};

  std::size_t event_index_ = 0;

  std::unordered_map<std::pair<std::int64_t, std::int64_t>, thread_index, pair_hash> thread_by_id_;
  std::pair<std::int64_t, std::int64_t> last_thread_key_{};
  std::optional<thread_index> last_thread_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names_;
  std::unordered_map<thread_index, std::string> fallback_names_;
  std::map<std::string, std::int64_t, std::less<>> synthetic_ids_;
  std::unordered_set<std::int64_t> synthetic_used_;

  name_counts unknown_categories_;
  name_counts unsupported_phases_;
  std::uint64_t negative_durations_ = 0;
  std::uint64_t graph_replay_ops_ = 0;  ///< device ops whose args carry a nonzero graph node id
  std::uint64_t zero_byte_memory_events_ = 0;  ///< [memory] events of 0 bytes (not read)
  /// [memory] / [OutOfMemory] events per `Device Type` other than CPU (0) and CUDA (1) (not read).
  device_type_counts other_device_memory_events_;
};

}  // namespace regionprof::import_detail
