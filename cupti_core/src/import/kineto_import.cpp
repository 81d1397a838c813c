// Kineto / torch.profiler Chrome trace reader (DESIGN.md, "Kineto import").
//
// Parsing strategy: a streaming scan of the top level, and simdjson on-demand over windows of the
// `traceEvents` array, so memory is bounded by the window (not the file) while the events are parsed
// at simdjson's speed. Each window is the bytes [begin, cut) of the input, where `begin` is the first
// byte of an event and `cut` is a point outside any string (after a newline, which JSON strings
// cannot contain raw, or, in newline-free JSON, before an opening quote found by quote parity). The
// window is parsed as `[` + bytes + `]`; the last event is usually cut short: it fails, is discarded
// (events are committed only once their object closed), and starts the next window.
// The few top-level members other than traceEvents are small and go through Boost.JSON.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/json.hpp>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "import/byte_source.hpp"
#include "import/error_position.hpp"
#include "import/input_window.hpp"
#include "import/microseconds.hpp"
#include "regionprof/import.hpp"
#include "regionprof/trace.hpp"
#include "regionprof/warnings.hpp"

namespace regionprof {
namespace {

namespace od = simdjson::ondemand;
using import_detail::byte_source;
using import_detail::choose_cut;
using import_detail::describe_byte;
using import_detail::find_text_problem;
using import_detail::is_space;
using import_detail::last_unescaped_quote;
using import_detail::quote_text;
using import_detail::sj_padding;
using import_detail::text_problem;
using import_detail::window_frame;
using import_detail::window_reader;

std::string_view trim_right(std::string_view text) noexcept {
  while (!text.empty() && is_space(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Events

/// True when the raw (quote-terminated) key is exactly `text`. Inline and byte by byte: keys are
/// short, and the mismatch (at the latest at the key's closing quote) stops the reading.
template <std::size_t n>
bool key_is(const od::raw_json_string& key, const char (&text)[n]) noexcept {
  const char* raw = key.raw();
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (raw[i] != text[i]) return false;
  }
  return raw[n - 1] == '"';
}

/// pid or tid as written: a number or a string.
struct id_text {
  bool is_string;
  std::int64_t number;
  std::string_view text;  // the string form
};

/// Fields of an event, for per-field type problems (bits of pending_event::bad).
enum field_bit : std::uint16_t {
  f_ph = 1 << 0, f_cat = 1 << 1, f_name = 1 << 2, f_ts = 1 << 3, f_dur = 1 << 4, f_pid = 1 << 5,
  f_tid = 1 << 6, f_args = 1 << 7, f_correlation = 1 << 8, f_device = 1 << 9, f_stream = 1 << 10,
  f_bytes = 1 << 11, f_domain = 1 << 12, f_meta_name = 1 << 13,
};

/// What each field must be, by bit position.
constexpr std::array<std::pair<std::string_view, std::string_view>, 14> field_rules{{
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
  std::uint16_t has = 0;
  std::uint16_t bad = 0;
  bool not_object = false;
  od::json_type type = od::json_type::object;

  void reset() noexcept {
    has = 0;
    bad = 0;
    not_object = false;
  }
  bool present(field_bit field) const noexcept { return (has & field) != 0; }
};

enum class cat_class : std::uint8_t { cpu, device, ignored, unknown };

struct cat_info {
  cat_class cls = cat_class::unknown;
  interval_kind cpu_kind = interval_kind::range;
  device_op_kind device_kind = device_op_kind::kernel;
};

cat_info classify(std::string_view cat) noexcept {
  if (cat == "cpu_op") return {cat_class::cpu, interval_kind::cpu_op, {}};
  if (cat == "kernel") return {cat_class::device, {}, device_op_kind::kernel};
  if (cat == "cuda_runtime") return {cat_class::cpu, interval_kind::runtime_api, {}};
  if (cat == "user_annotation") return {cat_class::cpu, interval_kind::range, {}};
  if (cat == "python_function") return {cat_class::cpu, interval_kind::python_function, {}};
  if (cat == "cuda_driver") return {cat_class::cpu, interval_kind::driver_api, {}};
  if (cat == "gpu_memcpy") return {cat_class::device, {}, device_op_kind::memcpy};
  if (cat == "gpu_memset") return {cat_class::device, {}, device_op_kind::memset};
  // Kineto categories that carry no time to attribute: device-side copies of annotations, the
  // profiler's own span, flows, synchronisation waits, profiler overhead, instant events.
  if (cat == "gpu_user_annotation" || cat == "Trace" || cat == "ac2g" || cat == "fwdbwd" ||
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

struct pair_hash {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& key) const noexcept {
    const auto a = static_cast<std::uint64_t>(key.first);
    const auto b = static_cast<std::uint64_t>(key.second);
    return static_cast<std::size_t>((a * 0x9e3779b97f4a7c15ULL) ^ (b + 0x7f4a7c159e3779b9ULL + (a << 6)));
  }
};

/// Counts per name, for warnings ("'cuda_sync' (41), 'foo' (2)").
using name_counts = std::map<std::string, std::uint64_t, std::less<>>;

void count(name_counts& counts, std::string_view name) {
  auto it = counts.find(name);
  if (it == counts.end()) it = counts.emplace(std::string(name), 0).first;
  ++it->second;
}

std::string describe_counts(const name_counts& counts) {
  std::string text;
  for (const auto& [name, n] : counts) {
    if (!text.empty()) text += ", ";
    text += quote_text(name) + " (" + std::to_string(n) + ")";
  }
  return text;
}

std::uint64_t total(const name_counts& counts) {
  std::uint64_t n = 0;
  for (const auto& entry : counts) n += entry.second;
  return n;
}

std::string_view type_name(od::json_type type) noexcept {
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

std::optional<warning_code> warning_code_from(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(warning_code::dropped_host_records); ++i) {
    const auto code = static_cast<warning_code>(i);
    if (to_string(code) == text) return code;
  }
  return std::nullopt;
}

std::optional<warning_source> warning_source_from(std::string_view text) {
  for (int i = 0; i <= static_cast<int>(warning_source::import); ++i) {
    const auto source = static_cast<warning_source>(i);
    if (to_string(source) == text) return source;
  }
  return std::nullopt;
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

// ---------------------------------------------------------------------------------------------
// The reader

class kineto_reader {
 public:
  kineto_reader(byte_source& source, std::string name, std::function<std::unique_ptr<byte_source>()> reopen,
                const kineto_import_options& options)
      : errors_(std::move(name), std::move(reopen)),
        options_(options),
        reader_(source, std::max<std::size_t>(options.window_bytes * 4, std::size_t{8} << 20)),
        window_(std::max<std::size_t>(options.window_bytes, 64)) {
    options_.window_bytes = window_;
  }

  trace read() {
    read_document();
    finish();
    return std::move(trace_);
  }

 private:
  // ----- errors

  [[noreturn]] void fail(std::uint64_t offset, std::string problem) { errors_.fail(offset, std::move(problem)); }
  [[noreturn]] void fail_here(std::string problem) { fail(reader_.offset(), std::move(problem)); }

  // ----- top level (scalar, streaming)

  void read_document() {
    int c = reader_.peek_nonspace();
    // A UTF-8 byte order mark is tolerated at the start.
    if (c == 0xef) {
      if (reader_.next() == 0xef && reader_.next() == 0xbb && reader_.next() == 0xbf) {
        c = reader_.peek_nonspace();
      } else {
        fail(0, "not JSON: the input starts with an invalid byte sequence");
      }
    }
    if (c < 0) fail(0, "empty input: expected a Kineto trace (a JSON object with traceEvents, or a list of events)");
    if (c == '[') {
      reader_.consume(1);
      read_events();
    } else if (c == '{') {
      reader_.consume(1);
      read_top_object();
    } else {
      fail(reader_.offset(), "not a Kineto trace: expected a JSON object with traceEvents or a list of events, found " +
                                 describe_byte(c));
    }
    c = reader_.peek_nonspace();
    if (c >= 0) fail_here("unexpected " + describe_byte(c) + " after the end of the JSON document");
  }

  void read_top_object() {
    bool seen_events = false;
    int c = reader_.peek_nonspace();
    if (c == '}') {
      reader_.consume(1);
    } else {
      for (;;) {
        if (c != '"') fail_here("expected a member name (a string) in the top-level object, found " + describe_byte(c));
        const std::uint64_t key_offset = reader_.offset();
        const std::string key = read_key();
        c = reader_.peek_nonspace();
        if (c != ':') fail_here("expected ':' after the member name " + quote_text(key) + ", found " + describe_byte(c));
        reader_.consume(1);
        c = reader_.peek_nonspace();
        if (key == "traceEvents") {
          if (seen_events) fail(key_offset, "the top-level object has 'traceEvents' twice");
          seen_events = true;
          if (c != '[') {
            fail_here("'traceEvents' must be an array of events, found " +
                      (c == '{' ? std::string("an object") : describe_byte(c)));
          }
          reader_.consume(1);
          read_events();
        } else {
          read_member(key);
        }
        c = reader_.peek_nonspace();
        if (c == '}') {
          reader_.consume(1);
          break;
        }
        if (c != ',') fail_here("expected ',' or '}' in the top-level object, found " + describe_byte(c));
        reader_.consume(1);
        c = reader_.peek_nonspace();
      }
    }
    if (!seen_events) {
      fail(0, "no 'traceEvents' array in the top-level object: not a Kineto/Chrome trace "
              "(expected {\"traceEvents\": [...]} or a list of events)");
    }
  }

  /// Reads a string token (the reader is at its opening quote) and returns it unescaped.
  std::string read_key() {
    const std::uint64_t start = reader_.offset();
    std::string raw = "\"";
    reader_.consume(1);
    bool escaped = false;
    for (;;) {
      const int c = reader_.next();
      if (c < 0) fail(start, "unterminated string in the top-level object");
      raw += static_cast<char>(c);
      if (raw.size() > 4096) fail(start, "a top-level member name is longer than 4096 bytes");
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        break;
      }
    }
    if (raw.find('\\') == std::string::npos) return raw.substr(1, raw.size() - 2);
    const boost::json::value v = parse_small_json(raw, start);
    return std::string(v.as_string());
  }

  /// Reads one JSON value of the top level (not traceEvents) as text; the reader is at its first byte.
  /// Only its extent is found here (strings, nesting); Boost.JSON validates it afterwards.
  std::string read_value_text() {
    const std::uint64_t start = reader_.offset();
    std::string text;
    auto take = [&]() -> int {
      const int c = reader_.next();
      if (c < 0) fail(start, "the input ends inside a top-level value (truncated file?)");
      text += static_cast<char>(c);
      if (text.size() > options_.max_event_bytes) {
        fail(start, "a top-level member is larger than " + std::to_string(options_.max_event_bytes) + " bytes");
      }
      return c;
    };
    const int first = reader_.peek();
    if (first == '"' || first == '{' || first == '[') {
      int depth = 0;
      bool in_string = false;
      bool escaped = false;
      do {
        const int c = take();
        if (in_string) {
          if (escaped) escaped = false;
          else if (c == '\\') escaped = true;
          else if (c == '"') in_string = false;
        } else if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          --depth;
        }
      } while (in_string || depth > 0);
    } else {
      // A number or literal: up to the next delimiter.
      for (int c = reader_.peek(); c >= 0 && c != ',' && c != '}' && c != ']' && !is_space(c); c = reader_.peek()) {
        take();
      }
    }
    return text;
  }

  boost::json::value parse_small_json(const std::string& text, std::uint64_t start) {
    boost::json::parser parser;
    boost::json::error_code ec;
    const std::size_t used = parser.write_some(text.data(), text.size(), ec);
    if (!ec && used != text.size()) ec = boost::json::error::extra_data;
    if (ec) fail(start + used, "invalid JSON: " + ec.message());
    return parser.release();
  }

  void read_member(const std::string& key) {
    const std::uint64_t start = reader_.offset();
    const std::string text = read_value_text();
    boost::json::value value = parse_small_json(text, start);
    if (key == "deviceProperties" || key == "distributedInfo") {
      target_extra_[key] = std::move(value);
    } else if (key == "regionprof") {
      if (!value.is_object()) fail(start, "'regionprof' must be an object (written by regionprof's Chrome trace writer)");
      own_ = std::move(value.as_object());
      own_offset_ = start;
    }
  }

  // ----- traceEvents (windows parsed by simdjson on-demand)

  /// The reader is just past the '[' of traceEvents.
  void read_events() {
    bool after_element = false;
    for (;;) {
      int c = reader_.peek_nonspace();
      if (c < 0) fail_here("the input ends inside traceEvents (truncated file?)");
      if (after_element) {
        if (c == ']') {
          reader_.consume(1);
          return;
        }
        if (c != ',') {
          fail_here("expected ',' or ']' after traceEvents[" + std::to_string(event_index_ - 1) + "], found " +
                    describe_byte(c));
        }
        reader_.consume(1);
        c = reader_.peek_nonspace();
        if (c < 0) fail_here("the input ends inside traceEvents (truncated file?)");
        if (c == ']') fail_here("expected an event after ',' in traceEvents, found ']'");
      } else if (c == ']' && event_index_ == 0) {
        reader_.consume(1);
        return;
      }
      if (parse_window(after_element)) return;
    }
  }

  /// event (after_element false) or after the last complete one (after_element true).
  bool parse_window(bool& after_element) {
    for (;;) {
      reader_.ensure(window_);
      char* const begin = reader_.begin();
      char* const data_end = std::min(reader_.end(), begin + window_);
      const bool whole_rest = reader_.exhausted() && data_end == reader_.end();
      char* cut = whole_rest ? data_end : choose_cut(begin, data_end);

      od::document doc;
      std::optional<window_frame> frame;
      frame.emplace(begin, cut);
      auto error = parser_.iterate(begin - 1, static_cast<std::size_t>(cut - begin) + 2,
                                   static_cast<std::size_t>(cut - begin) + 2 + sj_padding)
                       .get(doc);
      if (error == simdjson::UNCLOSED_STRING && !whole_rest) {
        // The window ends inside a string: end it before that string's opening quote instead.
        frame.reset();
        const char* quote = last_unescaped_quote(begin, cut);
        if (quote != nullptr && quote > begin) {
          cut = const_cast<char*>(quote);
          frame.emplace(begin, cut);
          error = parser_.iterate(begin - 1, static_cast<std::size_t>(cut - begin) + 2,
                                  static_cast<std::size_t>(cut - begin) + 2 + sj_padding)
                      .get(doc);
        } else {
          error = simdjson::UNCLOSED_STRING;
          cut = begin;  // nothing parseable yet: grow below
        }
      }
      if (error == simdjson::UNCLOSED_STRING && !whole_rest && cut == begin) {
        grow_or_fail(reader_.offset(), "an event");
        continue;
      }
      if (error) {
        frame.reset();
        const text_problem problem = find_text_problem(begin, cut);
        if (problem.where != nullptr) {
          fail(reader_.offset_of(problem.where), "invalid JSON in traceEvents: " + problem.what);
        }
        fail(reader_.offset(), std::string("invalid JSON in traceEvents: ") + simdjson::error_message(error));
      }

      od::array events;
      if (auto e = doc.get_array().get(events)) {
        fail(reader_.offset(), std::string("internal error reading traceEvents: ") + simdjson::error_message(e));
      }
      const char* after = nullptr;  // the token after the last committed event
      bool grow = false;            // the window's first event may be cut short: retry larger
      for (auto element : events) {
        od::value value;
        if (auto e = std::move(element).get(value)) {
          if (after != nullptr) {
            // The scalar scan at `after` diagnoses (or, at the window's end, continues).
            frame.reset();
            reader_.consume_to(after);
            after_element = true;
            return false;
          }
          const std::uint64_t at = reader_.offset();
          frame.reset();
          fail(at, "invalid JSON at traceEvents[" + std::to_string(event_index_) + "]: " +
                       simdjson::error_message(e));
        }
        const char* start = value.raw_json_token().data();
        pending_event& event = pending_;
        event.reset();
        if (auto e = read_event(value, event)) {
          const auto location = doc.current_location();
          const char* where = location.error() ? cut : std::clamp<const char*>(location.value_unsafe(), begin, cut);
          const std::uint64_t error_offset = reader_.offset_of(where);
          const std::uint64_t cut_offset = reader_.offset_of(cut);
          frame.reset();
          if (!whole_rest) {
            if (start > begin) {
              // Most likely cut short by the window: it starts the next window.
              reader_.consume_to(start);
              after_element = false;
              return false;
            }
            // The window's first event failed: unless the same error shows again with more data
            // after it, it may be cut short; retry with a larger window.
            const bool same_again = retry_error_offset_ == error_offset && retry_cut_offset_ < cut_offset;
            if (!same_again) {
              if (window_ >= options_.max_event_bytes) {
                fail(reader_.offset_of(start),
                     "traceEvents[" + std::to_string(event_index_) + "] does not end within " +
                         std::to_string(options_.max_event_bytes) + " bytes (an event larger than that, or invalid JSON: " +
                         simdjson::error_message(e) + ")");
              }
              retry_error_offset_ = error_offset;
              retry_cut_offset_ = cut_offset;
              grow = true;
              break;
            }
          }
          const bool at_end = whole_rest && error_offset + 1 >= reader_.offset_of(cut);
          fail(at_end ? reader_.offset_of(start) : error_offset,
               at_end ? "the input ends inside traceEvents[" + std::to_string(event_index_) + "] (truncated file?)"
                      : "invalid JSON in traceEvents[" + std::to_string(event_index_) + "]: " +
                            simdjson::error_message(e));
        }
        commit(event, start);
        const auto location = doc.current_location();
        after = location.error() ? cut : location.value_unsafe();
      }
      if (grow) {
        grow_or_fail(reader_.offset(), "an event");
        continue;
      }
      retry_error_offset_ = retry_cut_offset_ = std::numeric_limits<std::uint64_t>::max();
      window_ = options_.window_bytes;
      const auto location = doc.current_location();
      frame.reset();
      if (location.error()) {
        // Our ']' at the cut closed the array: the real one comes later.
        reader_.consume_to(after != nullptr ? after : cut);
        after_element = true;
        return false;
      }
      // The real ']' closed it; `location` is the next token (or our ']' at the cut).
      reader_.consume_to(std::min<const char*>(location.value_unsafe(), cut));
      return true;
    }
  }

  void grow_or_fail(std::uint64_t at, const char* what) {
    if (window_ >= options_.max_event_bytes) {
      fail(at, std::string(what) + " larger than " + std::to_string(options_.max_event_bytes) +
                   " bytes, or invalid JSON that never closes");
    }
    window_ = std::min(window_ * 2, options_.max_event_bytes);
  }

  // ----- one event

  static simdjson::error_code read_string(od::value& value, field_bit field, std::string_view& out,
                                          pending_event& event) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    if (type != od::json_type::string) {
      if (type != od::json_type::null) event.bad |= field;
      return simdjson::SUCCESS;
    }
    SIMDJSON_TRY(value.get_string().get(out));
    event.has |= field;
    return simdjson::SUCCESS;
  }

  static simdjson::error_code read_number_text(od::value& value, field_bit field, std::string_view& out,
                                               pending_event& event) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    if (type != od::json_type::number) {
      event.bad |= field;
      return simdjson::SUCCESS;
    }
    out = trim_right(value.raw_json_token());
    event.has |= field;
    return simdjson::SUCCESS;
  }

  static bool parse_integer(std::string_view text, std::int64_t& out) noexcept {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
  }

  static simdjson::error_code read_id(od::value& value, field_bit field, id_text& out, pending_event& event) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    if (type == od::json_type::string) {
      SIMDJSON_TRY(value.get_string().get(out.text));
      out.is_string = true;
      event.has |= field;
    } else if (type == od::json_type::number && parse_integer(trim_right(value.raw_json_token()), out.number)) {
      out.is_string = false;
      event.has |= field;
    } else {
      event.bad |= field;
    }
    return simdjson::SUCCESS;
  }

  static simdjson::error_code read_unsigned(od::value& value, field_bit field, std::uint64_t& out,
                                            pending_event& event) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    std::uint64_t number = 0;
    const std::string_view text = type == od::json_type::number ? trim_right(value.raw_json_token()) : std::string_view{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (type == od::json_type::number && ec == std::errc{} && end == text.data() + text.size()) {
      out = number;
      event.has |= field;
    } else if (type != od::json_type::null) {
      event.bad |= field;
    }
    return simdjson::SUCCESS;
  }

  static simdjson::error_code read_args(od::value& value, pending_event& event) {
    od::json_type type;
    SIMDJSON_TRY(value.type().get(type));
    if (type != od::json_type::object) {
      if (type != od::json_type::null) event.bad |= f_args;
      return simdjson::SUCCESS;
    }
    od::object args;
    SIMDJSON_TRY(value.get_object().get(args));
    for (auto member : args) {
      // value_unsafe() after the error check: moving the field out would copy it through the
      // stack (a store-forwarding stall per field, ~10 % of the import).
      SIMDJSON_TRY(member.error());
      od::field& field = member.value_unsafe();
      const od::raw_json_string key = field.key();
      od::value& v = field.value();
      switch (key.raw()[0]) {
        case 'c':
          if (key_is(key, "correlation")) {
            SIMDJSON_TRY(read_unsigned(v, f_correlation, event.correlation, event));
          }
          break;
        case 'd':
          if (key_is(key, "device")) {
            SIMDJSON_TRY(read_unsigned(v, f_device, event.device, event));
          } else if (key_is(key, "domain")) {
            SIMDJSON_TRY(read_string(v, f_domain, event.domain, event));
          }
          break;
        case 's':
          if (key_is(key, "stream")) {
            SIMDJSON_TRY(read_unsigned(v, f_stream, event.stream, event));
          }
          break;
        case 'b':
          if (key_is(key, "bytes")) {
            SIMDJSON_TRY(read_unsigned(v, f_bytes, event.bytes, event));
          }
          break;
        case 'n':
          if (key_is(key, "name")) {
            SIMDJSON_TRY(read_string(v, f_meta_name, event.meta_name, event));
          }
          break;
        default:
          break;
      }
    }
    return simdjson::SUCCESS;
  }

  static simdjson::error_code read_event(od::value& value, pending_event& event) {
    SIMDJSON_TRY(value.type().get(event.type));
    if (event.type != od::json_type::object) {
      event.not_object = true;
      return simdjson::SUCCESS;
    }
    od::object object;
    SIMDJSON_TRY(value.get_object().get(object));
    // Keys are dispatched on their first byte (the raw key is quote-terminated inside the padded
    // window, so looking at its first bytes is safe), then compared whole.
    for (auto member : object) {
      // value_unsafe() after the error check: moving the field out would copy it through the
      // stack (a store-forwarding stall per field, ~10 % of the import).
      SIMDJSON_TRY(member.error());
      od::field& field = member.value_unsafe();
      const od::raw_json_string key = field.key();
      od::value& v = field.value();
      switch (key.raw()[0]) {
        case 'p':
          if (key_is(key, "ph")) {
            SIMDJSON_TRY(read_string(v, f_ph, event.ph, event));
          } else if (key_is(key, "pid")) {
            SIMDJSON_TRY(read_id(v, f_pid, event.pid, event));
          }
          break;
        case 'c':
          if (key_is(key, "cat")) {
            SIMDJSON_TRY(read_string(v, f_cat, event.cat, event));
          }
          break;
        case 'n':
          if (key_is(key, "name")) {
            SIMDJSON_TRY(read_string(v, f_name, event.name, event));
          }
          break;
        case 't':
          if (key_is(key, "ts")) {
            SIMDJSON_TRY(read_number_text(v, f_ts, event.ts, event));
          } else if (key_is(key, "tid")) {
            SIMDJSON_TRY(read_id(v, f_tid, event.tid, event));
          }
          break;
        case 'd':
          if (key_is(key, "dur")) {
            SIMDJSON_TRY(read_number_text(v, f_dur, event.dur, event));
          }
          break;
        case 'a':
          // Nothing of a framework op's args is used (its shapes and ids are most of a trace's
          // bytes): when the cat came first, as Kineto writes it, on-demand skips them unread.
          if (key_is(key, "args") && !(event.present(f_cat) && (event.cat == "cpu_op" || event.cat == "python_function"))) {
            SIMDJSON_TRY(read_args(v, event));
          }
          break;
        default:
          break;
      }
    }
    return simdjson::SUCCESS;
  }

  /// Fails for the event being committed (event_index_ - 1).
  [[noreturn]] void fail_event(const char* start, const std::string& problem) {
    fail(reader_.offset_of(start), "traceEvents[" + std::to_string(event_index_ - 1) + "]: " + problem);
  }

  /// Fails when one of the fields in `used` had the wrong type.
  void require_types(const pending_event& event, std::uint16_t used, const char* start) {
    const std::uint16_t bad = event.bad & used;
    if (bad == 0) return;
    const auto bit = static_cast<std::size_t>(std::countr_zero(bad));
    fail_event(start, "'" + std::string(field_rules[bit].first) + "' " + std::string(field_rules[bit].second));
  }

  /// trace::strings.intern behind a small direct-mapped cache: most events repeat a few hundred
  /// names, and probing with 3 words + one memcmp beats hashing a 5 KB kernel name.
  name_id intern(std::string_view text) {
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
    if (slot.text.size() == text.size() && std::memcmp(slot.text.data(), text.data(), text.size()) == 0) {
      return slot.id;
    }
    slot.id = trace_.strings.intern(text);
    slot.text = trace_.strings.view(slot.id);
    return slot.id;
  }

  std::int64_t resolve_id(const id_text& id) {
    if (!id.is_string) return id.number;
    if (auto found = synthetic_ids_.find(id.text); found != synthetic_ids_.end()) return found->second;
    // Stable: a hash of the string, placed at or below -2^46 (far from real pids, tids and Kineto's -1);
    // a collision moves down deterministically in order of first appearance.
    auto number = -static_cast<std::int64_t>((fnv1a(id.text) & ((std::uint64_t{1} << 46) - 1)) + (std::uint64_t{1} << 46));
    while (!synthetic_used_.emplace(number).second) --number;
    synthetic_ids_.emplace(std::string(id.text), number);
    return number;
  }

  thread_index thread_of(const pending_event& event) {
    const std::pair<std::int64_t, std::int64_t> key{resolve_id(event.pid), resolve_id(event.tid)};
    if (last_thread_ && last_thread_key_ == key) return *last_thread_;
    auto found = thread_by_id_.find(key);
    if (found == thread_by_id_.end()) {
      const auto index = static_cast<thread_index>(trace_.threads.size());
      trace_.threads.push_back({key.first, key.second, 0});
      found = thread_by_id_.emplace(key, index).first;
      // A string id names the thread unless thread_name metadata does.
      if (event.tid.is_string) fallback_names_.emplace(index, std::string(event.tid.text));
      else if (event.pid.is_string) fallback_names_.emplace(index, std::string(event.pid.text));
    }
    last_thread_key_ = key;
    last_thread_ = found->second;
    return found->second;
  }

  void commit(const pending_event& event, const char* start) {
    ++event_index_;
    if (event.not_object) {
      fail_event(start, "an event must be an object, found " + std::string(type_name(event.type)));
    }
    require_types(event, f_ph, start);
    if (!event.present(f_ph)) {
      count(unsupported_phases_, "(none)");
      return;
    }
    if (event.ph == "X") {
      require_types(event, f_cat, start);
      const cat_info info = event.present(f_cat) ? classify(event.cat) : cat_info{};
      if (info.cls == cat_class::cpu) {
        require_types(event, f_name | f_ts | f_dur | f_pid | f_tid | f_args | f_domain |
                                 (is_api_call(info.cpu_kind) ? f_correlation : 0),
                      start);
        add_interval(event, start, info.cpu_kind);
      } else if (info.cls == cat_class::device) {
        require_types(event, f_name | f_ts | f_dur | f_pid | f_tid | f_args | f_correlation | f_device | f_stream |
                                 f_bytes,
                      start);
        add_device_op(event, start, info.device_kind);
      } else if (info.cls == cat_class::unknown) {
        count(unknown_categories_, event.present(f_cat) ? event.cat : std::string_view("(none)"));
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

  /// ts and dur in ns; false when the event is dropped (negative duration, counted).
  bool read_times(const pending_event& event, const char* start, std::int64_t& begin_ns, std::int64_t& end_ns) {
    if (!event.present(f_ts)) fail_event(start, "complete event ('ph': 'X') without 'ts'");
    if (!event.present(f_dur)) fail_event(start, "complete event ('ph': 'X') without 'dur'");
    std::int64_t ts = 0;
    if (!import_detail::microseconds_to_ns_fast(event.ts, ts)) {
      const auto exact = microseconds_text_to_ns(event.ts);
      if (!exact) fail_event(start, "'ts' " + quote_text(event.ts) + " is not a number of microseconds that fits in int64 ns");
      ts = *exact;
    }
    std::int64_t dur = 0;
    if (!import_detail::microseconds_to_ns_fast(event.dur, dur)) {
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

  void add_interval(const pending_event& event, const char* start, interval_kind kind) {
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
    if (event.present(f_domain)) interval.domain = trace_.domain(event.domain);
    trace_.intervals.push_back(interval);
  }

  void add_device_op(const pending_event& event, const char* start, device_op_kind kind) {
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
  }

  // ----- after the last byte

  void finish() {
    for (std::size_t i = 0; i < trace_.threads.size(); ++i) {
      auto& thread = trace_.threads[i];
      if (auto named = thread_names_.find({thread.pid, thread.tid}); named != thread_names_.end()) {
        thread.name = trace_.strings.intern(named->second);
      } else if (auto fallback = fallback_names_.find(static_cast<thread_index>(i)); fallback != fallback_names_.end()) {
        thread.name = trace_.strings.intern(fallback->second);
      }
    }
    trace_.target_type = "kineto_trace";
    trace_.device_tracing = !trace_.device_ops.empty() || target_extra_.contains("deviceProperties");
    if (!target_extra_.empty()) trace_.target_extra_json = boost::json::serialize(target_extra_);
    if (own_) restore_own(*own_);

    const std::uint64_t unknown = total(unknown_categories_);
    if (unknown != 0) {
      trace_.warnings.push_back(
          {warning_code::dropped_host_records, warning_source::import,
           "ignored " + std::to_string(unknown) + " complete events of categories regionprof does not import: " +
               describe_counts(unknown_categories_) +
               " (imported: cpu_op, user_annotation, python_function, cuda_runtime, cuda_driver, kernel, "
               "gpu_memcpy, gpu_memset)"});
    }
    const std::uint64_t phases = total(unsupported_phases_);
    if (phases != 0) {
      trace_.warnings.push_back(
          {warning_code::dropped_host_records, warning_source::import,
           "ignored " + std::to_string(phases) + " events of unsupported phases: " + describe_counts(unsupported_phases_) +
               " (regionprof reads complete events, 'ph': 'X'; write begin/end pairs as complete events)"});
    }
    if (negative_durations_ != 0) {
      trace_.warnings.push_back({warning_code::dropped_host_records, warning_source::import,
                                 "dropped " + std::to_string(negative_durations_) +
                                     " complete events with a negative 'dur'"});
    }
  }

  [[noreturn]] void fail_own(const std::string& problem) {
    fail(own_offset_, "'regionprof' object: " + problem);
  }

  void restore_own(const boost::json::object& own) {
    if (const auto* v = own.if_contains("schema_version")) {
      if (!v->is_int64() || v->as_int64() != 1) {
        fail_own("unsupported schema_version " + boost::json::serialize(*v) + " (this reader knows 1)");
      }
    }
    if (const auto* v = own.if_contains("target_type")) {
      if (!v->is_string()) fail_own("'target_type' must be a string");
      trace_.target_type = std::string(v->as_string());
    }
    if (const auto* v = own.if_contains("device_tracing")) {
      if (!v->is_bool()) fail_own("'device_tracing' must be a boolean");
      trace_.device_tracing = v->as_bool();
    }
    if (const auto* v = own.if_contains("run_wall_times_ns")) {
      if (!v->is_array()) fail_own("'run_wall_times_ns' must be an array of integers");
      for (const auto& t : v->as_array()) {
        if (t.is_int64()) trace_.run_wall_times_ns.push_back(t.as_int64());
        else if (t.is_uint64() && t.as_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          trace_.run_wall_times_ns.push_back(static_cast<std::int64_t>(t.as_uint64()));
        else fail_own("'run_wall_times_ns' must be an array of integers");
      }
    }
    if (const auto* v = own.if_contains("module_types")) {
      if (!v->is_object()) fail_own("'module_types' must be an object of strings");
      for (const auto& [region, type] : v->as_object()) {
        if (!type.is_string()) fail_own("'module_types' must be an object of strings");
        trace_.module_types[std::string(region)] = std::string(type.as_string());
      }
    }
    if (const auto* v = own.if_contains("warnings")) {
      if (!v->is_array()) fail_own("'warnings' must be an array");
      std::vector<warning> restored;
      for (const auto& w : v->as_array()) {
        const auto* object = w.if_object();
        const auto* code = object != nullptr ? object->if_contains("code") : nullptr;
        const auto* source = object != nullptr ? object->if_contains("source") : nullptr;
        const auto* message = object != nullptr ? object->if_contains("message") : nullptr;
        if (code == nullptr || !code->is_string() || source == nullptr || !source->is_string() || message == nullptr ||
            !message->is_string()) {
          fail_own("each warning must be an object with string 'code', 'source' and 'message'");
        }
        const auto parsed_code = warning_code_from(code->as_string());
        if (!parsed_code) fail_own("unknown warning code " + quote_text(code->as_string()));
        const auto parsed_source = warning_source_from(source->as_string());
        if (!parsed_source) fail_own("unknown warning source " + quote_text(source->as_string()));
        restored.push_back({*parsed_code, *parsed_source, std::string(message->as_string())});
      }
      // The producer's warnings come first, the importer's own after them.
      trace_.warnings.insert(trace_.warnings.begin(), restored.begin(), restored.end());
    }
  }

  import_detail::input_errors errors_;
  kineto_import_options options_;
  window_reader reader_;
  std::size_t window_;  // bytes per simdjson window: options_.window_bytes, doubled while an event does not fit
  od::parser parser_;
  trace trace_;

  struct name_slot {
    std::string_view text;
    name_id id = 0;
  };
  static constexpr std::size_t name_cache_size = 4096;
  std::array<name_slot, name_cache_size> name_cache_{};

  pending_event pending_;  // reused for every event
  std::size_t event_index_ = 0;
  std::uint64_t retry_error_offset_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t retry_cut_offset_ = std::numeric_limits<std::uint64_t>::max();

  std::unordered_map<std::pair<std::int64_t, std::int64_t>, thread_index, pair_hash> thread_by_id_;
  std::pair<std::int64_t, std::int64_t> last_thread_key_{};
  std::optional<thread_index> last_thread_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names_;
  std::unordered_map<thread_index, std::string> fallback_names_;
  std::map<std::string, std::int64_t, std::less<>> synthetic_ids_;
  std::unordered_set<std::int64_t> synthetic_used_;

  boost::json::object target_extra_;
  std::optional<boost::json::object> own_;
  std::uint64_t own_offset_ = 0;

  name_counts unknown_categories_;
  name_counts unsupported_phases_;
  std::uint64_t negative_durations_ = 0;
};

}  // namespace

trace import_kineto_trace(const std::string& path, const kineto_import_options& options) {
  auto source = import_detail::open_file_source(path);
  kineto_reader reader(*source, path, [path] { return import_detail::open_file_source(path); }, options);
  return reader.read();
}

trace import_kineto_trace_text(std::string_view bytes, const std::string& name, const kineto_import_options& options) {
  auto source = import_detail::open_memory_source(bytes, name);
  kineto_reader reader(*source, name, [bytes, name] { return import_detail::open_memory_source(bytes, name); },
                       options);
  return reader.read();
}

}  // namespace regionprof
