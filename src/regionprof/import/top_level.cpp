// The top level of a Kineto trace, scanned byte by byte: the document (an object with traceEvents,
// or a bare list of events) and its members other than traceEvents, each parsed whole by Boost.JSON.
#include <boost/json.hpp>
#include <string>
#include <utility>

#include "regionprof/import/error_position.hpp"
#include "regionprof/import/input_window.hpp"
#include "regionprof/import/kineto_reader.hpp"

namespace regionprof::import_detail {

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
  const boost::json::value v = parse_small_json(raw, start, "a top-level member name");
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

boost::json::value kineto_reader::parse_small_json(const std::string& text, std::uint64_t start,
                                                   const std::string& what) const {
  boost::json::parse_options limits;
  limits.max_depth = max_member_depth;
  boost::json::parser parser({}, limits);
  boost::json::error_code ec;
  const std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (ec == boost::json::error::too_deep) {
    fail(start + used, what + " nests deeper than " + std::to_string(max_member_depth) + " levels");
  }
  if (!ec && used != text.size()) ec = boost::json::error::extra_data;
  if (ec) fail(start + used, "invalid JSON: " + ec.message());
  return parser.release();
}

void kineto_reader::read_member(const std::string& key) {
  const std::uint64_t start = reader_.offset();
  const std::string text = read_value_text();
  boost::json::value value = parse_small_json(text, start, "the top-level member " + quote_text(key));
  if (key == "deviceProperties" || key == "distributedInfo") {
    target_extra_[key] = std::move(value);
  } else if (key == "regionprof") {
    if (!value.is_object()) fail(start, "'regionprof' must be an object (written by regionprof's Chrome trace writer)");
    own_ = std::move(value.as_object());
    own_offset_ = start;
  }
}
}  // namespace regionprof::import_detail
