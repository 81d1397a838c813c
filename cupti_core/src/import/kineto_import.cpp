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
#include <simdjson.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "import/byte_source.hpp"
#include "import/error_position.hpp"
#include "import/input_window.hpp"
#include "import/kineto_event.hpp"
#include "import/kineto_mapping.hpp"
#include "regionprof/import.hpp"
#include "regionprof/trace.hpp"

namespace regionprof {
namespace import_detail {
namespace {

std::string_view trim_right(std::string_view text) noexcept {
  while (!text.empty() && is_space(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

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

simdjson::error_code read_string(od::value& value, field_bit field, std::string_view& out,
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

simdjson::error_code read_number_text(od::value& value, field_bit field, std::string_view& out,
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

bool parse_integer(std::string_view text, std::int64_t& out) noexcept {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

simdjson::error_code read_id(od::value& value, field_bit field, id_text& out, pending_event& event) {
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

simdjson::error_code read_unsigned(od::value& value, field_bit field, std::uint64_t& out,
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

simdjson::error_code read_args(od::value& value, pending_event& event) {
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

simdjson::error_code read_event(od::value& value, pending_event& event) {
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

}  // namespace

/// Reads one input into a trace.
class kineto_reader {
 public:
  /// `reopen` opens the input again from its first byte (error positions only).
  kineto_reader(byte_source& source, std::string name, std::function<std::unique_ptr<byte_source>()> reopen,
                const kineto_import_options& options);

  trace read();

 private:
  [[noreturn]] void fail(std::uint64_t offset, std::string problem) const { errors_.fail(offset, std::move(problem)); }
  [[noreturn]] void fail_here(std::string problem) const { fail(reader_.offset(), std::move(problem)); }

  // ----- top level (scalar, streaming)

  void read_document();
  void read_top_object();
  /// Reads a string token (the reader is at its opening quote) and returns it unescaped.
  std::string read_key();
  /// Reads one JSON value of the top level (not traceEvents) as text; the reader is at its first byte.
  /// Only its extent is found here (strings, nesting); Boost.JSON validates it afterwards.
  std::string read_value_text();
  boost::json::value parse_small_json(const std::string& text, std::uint64_t start) const;
  void read_member(const std::string& key);

  // ----- traceEvents (windows parsed by simdjson on-demand)

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

kineto_reader::kineto_reader(byte_source& source, std::string name,
                             std::function<std::unique_ptr<byte_source>()> reopen,
                             const kineto_import_options& options)
    : errors_(std::move(name), std::move(reopen)),
      options_(options),
      reader_(source, std::max<std::size_t>(options.window_bytes * 4, std::size_t{8} << 20)),
      window_(std::max<std::size_t>(options.window_bytes, 64)),
      mapper_(errors_, reader_) {
  options_.window_bytes = window_;
}

trace kineto_reader::read() {
  read_document();
  return mapper_.finish(target_extra_, own_ ? &*own_ : nullptr, own_offset_);
}

void kineto_reader::read_document() {
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

void kineto_reader::read_top_object() {
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

std::string kineto_reader::read_key() {
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

std::string kineto_reader::read_value_text() {
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

boost::json::value kineto_reader::parse_small_json(const std::string& text, std::uint64_t start) const {
  boost::json::parser parser;
  boost::json::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec && used != text.size()) ec = boost::json::error::extra_data;
  if (ec) fail(start + used, "invalid JSON: " + ec.message());
  return parser.release();
}

void kineto_reader::read_member(const std::string& key) {
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

void kineto_reader::read_events() {
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
        fail_here("expected ',' or ']' after traceEvents[" + std::to_string(mapper_.event_index() - 1) + "], found " +
                  describe_byte(c));
      }
      reader_.consume(1);
      c = reader_.peek_nonspace();
      if (c < 0) fail_here("the input ends inside traceEvents (truncated file?)");
      if (c == ']') fail_here("expected an event after ',' in traceEvents, found ']'");
    } else if (c == ']' && mapper_.event_index() == 0) {
      reader_.consume(1);
      return;
    }
    if (parse_window(after_element)) return;
  }
}

bool kineto_reader::parse_window(bool& after_element) {
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
        fail(at, "invalid JSON at traceEvents[" + std::to_string(mapper_.event_index()) + "]: " +
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
                   "traceEvents[" + std::to_string(mapper_.event_index()) + "] does not end within " +
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
             at_end ? "the input ends inside traceEvents[" + std::to_string(mapper_.event_index()) + "] (truncated file?)"
                    : "invalid JSON in traceEvents[" + std::to_string(mapper_.event_index()) + "]: " +
                          simdjson::error_message(e));
      }
      mapper_.commit(event, start);
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

void kineto_reader::grow_or_fail(std::uint64_t at, const char* what) {
  if (window_ >= options_.max_event_bytes) {
    fail(at, std::string(what) + " larger than " + std::to_string(options_.max_event_bytes) +
                 " bytes, or invalid JSON that never closes");
  }
  window_ = std::min(window_ * 2, options_.max_event_bytes);
}

}  // namespace import_detail

trace import_kineto_trace(const std::string& path, const kineto_import_options& options) {
  auto source = import_detail::open_file_source(path);
  import_detail::kineto_reader reader(*source, path, [path] { return import_detail::open_file_source(path); },
                                      options);
  return reader.read();
}

trace import_kineto_trace_text(std::string_view bytes, const std::string& name, const kineto_import_options& options) {
  auto source = import_detail::open_memory_source(bytes, name);
  import_detail::kineto_reader reader(
      *source, name, [bytes, name] { return import_detail::open_memory_source(bytes, name); }, options);
  return reader.read();
}

}  // namespace regionprof
