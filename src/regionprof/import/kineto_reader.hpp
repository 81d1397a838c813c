// The Kineto / torch.profiler Chrome trace reader (docs/design.md, "Kineto import").
//
// Parsing strategy: a streaming scan of the top level, and simdjson on-demand over windows of the
// `traceEvents` array, so memory is bounded by the window (not the file) while the events are parsed
// at simdjson's speed. Each window is the bytes [begin, cut) of the input, where `begin` is the first
// byte of an event and `cut` is a point outside any string (after a newline, which JSON strings
// cannot contain raw, or, in newline-free JSON, before an opening quote found by quote parity). The
// window is parsed as `[` + bytes + `]`; the last event is usually cut short: it fails, is discarded
// (events are committed only once their object closed), and starts the next window.
// The few top-level members other than traceEvents are small and go through Boost.JSON.
#pragma once

#include <simdjson.h>

#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "regionprof/import/byte_source.hpp"
#include "regionprof/import/error_position.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/import/input_window.hpp"
#include "regionprof/import/kineto_event.hpp"
#include "regionprof/import/kineto_mapping.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::import_detail {

/// Reads one input into a trace. The scan is split by where it is: top_level.cpp (the document and
/// its members other than traceEvents), event_scan.cpp (traceEvents, in windows).
class kineto_reader {
 public:
  /// `reopen` opens the input again from its first byte (error positions only).
  kineto_reader(byte_source& source, std::string name, std::function<std::unique_ptr<byte_source>()> reopen,
                const kineto_import_options& options);

  trace read();

 private:
  [[noreturn]] void fail(std::uint64_t offset, std::string problem) const { errors_.fail(offset, std::move(problem)); }
  [[noreturn]] void fail_here(std::string problem) const { fail(reader_.offset(), std::move(problem)); }

  // ----- top level (scalar, streaming): top_level.cpp

  void read_document();
  void read_top_object();
  /// Reads a string token (the reader is at its opening quote) and returns it unescaped.
  std::string read_key();
  /// Reads one JSON value of the top level (not traceEvents) as text; the reader is at its first byte.
  /// Only its extent is found here (strings, nesting); Boost.JSON validates it afterwards.
  std::string read_value_text();
  /// Members nest at most this deep (deviceProperties is 3 levels): Boost.JSON's DOM parser and
  /// the report writers that write the target's members recurse once per level.
  static constexpr std::size_t max_member_depth = 32;
  /// Parses `text` (input offset `start`); `what` names it in errors.
  boost::json::value parse_small_json(const std::string& text, std::uint64_t start, const std::string& what) const;
  void read_member(const std::string& key);

  // ----- traceEvents (windows parsed by simdjson on-demand): event_scan.cpp

  /// The reader is just past the '[' of traceEvents.
  void read_events();
  /// Parses events from the reader's position (the first byte of an event) to the end of one
  /// window. Returns true when the array's ']' was reached; otherwise the reader is left at the next
  /// event (after_element false) or after the last complete one (after_element true).
  bool parse_window(bool& after_element);
  void grow_or_fail(std::uint64_t at, const char* what);

  input_errors errors_;
  kineto_import_options options_;
  window_reader reader_;
  std::size_t window_;  // bytes per simdjson window: options_.window_bytes, doubled while an event does not fit
  od::parser parser_;

  pending_event pending_;  // reused for every event
  // The first event of a window that failed at error offset .._error_ with the window cut at
  // .._cut_: the same failure with a later cut is a real error, not a window too small.
  std::uint64_t retry_error_offset_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t retry_cut_offset_ = std::numeric_limits<std::uint64_t>::max();

  kineto_mapper mapper_;

  boost::json::object target_extra_;        // deviceProperties, distributedInfo
  std::optional<boost::json::object> own_;  // the 'regionprof' object
  std::uint64_t own_offset_ = 0;
};

}  // namespace regionprof::import_detail
