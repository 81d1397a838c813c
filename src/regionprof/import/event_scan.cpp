// traceEvents, scanned by simdjson on-demand in windows cut outside strings (input_window.hpp): the
// elements of each window, the fields of each event, and where a window that failed is retried
// larger, cut shorter or reported.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "regionprof/import/error_position.hpp"
#include "regionprof/import/input_window.hpp"
#include "regionprof/import/kineto_event.hpp"
#include "regionprof/import/kineto_reader.hpp"

namespace regionprof::import_detail {
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

// Inlined into each reader, as it was when read_id was its one caller (a call costs ~1 % of the import).
[[gnu::always_inline]] inline bool parse_integer(std::string_view text, std::int64_t& out) noexcept {
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

simdjson::error_code read_signed(od::value& value, field_bit field, std::int64_t& out, pending_event& event) {
  od::json_type type;
  SIMDJSON_TRY(value.type().get(type));
  if (type == od::json_type::number && parse_integer(trim_right(value.raw_json_token()), out)) {
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
      case 'g':
        // A graph replay's op (Kineto builds that write them): either id, nonzero, marks it.
        if (key_is(key, "graph node id") || key_is(key, "graph id")) {
          std::uint64_t id = 0;
          const bool had = event.present(f_graph);
          SIMDJSON_TRY(read_unsigned(v, f_graph, id, event));
          event.graph = had ? (event.graph | id) : id;
        }
        break;
      case 'n':
        if (key_is(key, "name")) {
          SIMDJSON_TRY(read_string(v, f_meta_name, event.meta_name, event));
        }
        break;
      // The args of torch's [memory] and [OutOfMemory] instants.
      case 'D':
        if (key_is(key, "Device Type")) {
          SIMDJSON_TRY(read_signed(v, f_device_type, event.device_type, event));
        } else if (key_is(key, "Device Id")) {
          SIMDJSON_TRY(read_signed(v, f_device_id, event.device_id, event));
        }
        break;
      case 'B':
        if (key_is(key, "Bytes")) {
          SIMDJSON_TRY(read_signed(v, f_memory_bytes, event.memory_bytes, event));
        }
        break;
      case 'T':
        if (key_is(key, "Total Allocated")) {
          SIMDJSON_TRY(read_unsigned(v, f_total_allocated, event.total_allocated, event));
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
}  // namespace regionprof::import_detail
