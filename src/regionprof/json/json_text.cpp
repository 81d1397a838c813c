#include "regionprof/json/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/string.hpp>

namespace regionprof::report_detail {
namespace {

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";  // U+FFFD

/// Length of the well-formed UTF-8 sequence (Unicode Table 3-7) starting at p[0] (1 for ASCII), or 0
/// when there is none; then `invalid` is the length of the maximal invalid subpart (>= 1), which is
/// replaced as a whole by one U+FFFD (Unicode's "substitution of maximal subparts").
std::size_t utf8_sequence(const unsigned char* p, std::size_t available, std::size_t& invalid) noexcept {
  const unsigned char lead = p[0];
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead == 0xE0) {
    length = 3;
    low = 0xA0;  // no overlong forms
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    length = 3;
  } else if (lead == 0xED) {
    length = 3;
    high = 0x9F;  // no UTF-16 surrogates
  } else if (lead == 0xF0) {
    length = 4;
    low = 0x90;  // no overlong forms
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    length = 4;
  } else if (lead == 0xF4) {
    length = 4;
    high = 0x8F;  // nothing above U+10FFFF
  } else {
    invalid = 1;
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (k >= available || p[k] < low || p[k] > high) {
      invalid = k;
      return 0;
    }
    low = 0x80;
    high = 0xBF;
  }
  return length;
}

// DEL is legal raw JSON, but Perfetto's JSON tokenizer rejects every iscntrl() byte inside a string
// (it would fail the whole import), so it is escaped too.
bool needs_escape(unsigned char c) noexcept { return c < 0x20 || c == 0x7F || c == '"' || c == '\\'; }

void append_escaped_ascii(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  constexpr char hex[] = "0123456789abcdef";
  out += "\\u00";
  out += hex[c >> 4];
  out += hex[c & 0xF];
}

void append_newline(std::string& out, int indent, int depth) {
  if (indent <= 0) return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
}

/// Where append_json_at writes: `text`, handed to `stream` in pieces of about flush_bytes when there
/// is one (then a long string is written through in pieces too, never held whole).
struct json_sink {
  static constexpr std::size_t flush_bytes = std::size_t{1} << 20;
  std::string& text;
  std::ostream* stream = nullptr;

  void flush() {
    stream->write(text.data(), static_cast<std::streamsize>(text.size()));
    text.clear();
  }
  void maybe_flush() {
    if (stream != nullptr && text.size() >= flush_bytes) flush();
  }
  void string(std::string_view value) {
    if (stream == nullptr || value.size() < flush_bytes) {
      append_json_string(text, value);
      maybe_flush();
      return;
    }
    flush();
    write_json_string(*stream, text, value);
  }
};

void append_json_at(json_sink& sink, const boost::json::value& value, int indent, int depth) {
  std::string& out = sink.text;
  switch (value.kind()) {
    case boost::json::kind::null: out += "null"; return;
    case boost::json::kind::bool_: out += value.get_bool() ? "true" : "false"; return;
    case boost::json::kind::int64: append_int(out, value.get_int64()); return;
    case boost::json::kind::uint64: append_uint(out, value.get_uint64()); return;
    case boost::json::kind::double_: append_double(out, value.get_double()); return;
    case boost::json::kind::string: {
      const boost::json::string& text = value.get_string();
      sink.string(std::string_view(text.data(), text.size()));
      return;
    }
    case boost::json::kind::array: {
      const boost::json::array& items = value.get_array();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const boost::json::value& item : items) {
        if (!first) out += ',';
        first = false;
        append_newline(out, indent, depth + 1);
        append_json_at(sink, item, indent, depth + 1);
        sink.maybe_flush();
      }
      append_newline(out, indent, depth);
      out += ']';
      return;
    }
    case boost::json::kind::object: {
      const boost::json::object& members = value.get_object();
      if (members.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& member : members) {
        if (!first) out += ',';
        first = false;
        append_newline(out, indent, depth + 1);
        sink.string(std::string_view(member.key().data(), member.key().size()));
        out += indent > 0 ? ": " : ":";
        append_json_at(sink, member.value(), indent, depth + 1);
        sink.maybe_flush();
      }
      append_newline(out, indent, depth);
      out += '}';
      return;
    }
  }
}

}  // namespace

bool is_plain_json_string(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (needs_escape(c)) return false;
      ++i;
      continue;
    }
    std::size_t invalid = 0;
    const std::size_t length = utf8_sequence(p + i, n - i, invalid);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  append_json_string_body(out, text);
  out += '"';
}

void append_json_string_body(std::string& out, std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // Copy the longest run that needs nothing done in one append.
    std::size_t run = i;
    while (run < n) {
      const unsigned char c = p[run];
      if (c < 0x80) {
        if (needs_escape(c)) break;
        ++run;
        continue;
      }
      std::size_t invalid = 0;
      const std::size_t length = utf8_sequence(p + run, n - run, invalid);
      if (length == 0) break;
      run += length;
    }
    out.append(text.data() + i, run - i);
    i = run;
    if (i >= n) break;
    if (p[i] < 0x80) {
      append_escaped_ascii(out, p[i]);
      ++i;
    } else {
      std::size_t invalid = 1;
      utf8_sequence(p + i, n - i, invalid);
      out += replacement_character;
      i += invalid;
    }
  }
}

std::string repair_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t invalid = 1;
    const std::size_t length = utf8_sequence(p + i, n - i, invalid);
    if (length == 0) {
      out += replacement_character;
      i += invalid;
    } else {
      out.append(text.data() + i, length);
      i += length;
    }
  }
  return out;
}

void append_uint(std::string& out, std::uint64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_int(std::string& out, std::int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void append_us(std::string& out, std::int64_t ns) {
  // Magnitude in unsigned arithmetic, so INT64_MIN is exact too.
  std::uint64_t magnitude = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    magnitude = 0 - magnitude;
  }
  append_uint(out, magnitude / 1000);
  const auto fraction = static_cast<unsigned>(magnitude % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
  out.append(digits, 4);
}

void append_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude == 0.0 || (magnitude >= 1e-6 && magnitude < 1e15);
  const auto result = fixed ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                            : std::to_chars(buffer, buffer + sizeof buffer, value);
  const std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void append_json(std::string& out, const boost::json::value& value, int indent, int depth) {
  json_sink sink{out};
  append_json_at(sink, value, indent, depth);
}

std::size_t write_json_string(std::ostream& out, std::string& scratch, std::string_view text) {
  constexpr std::size_t piece_bytes = std::size_t{1} << 20;
  std::size_t written = 2;  // the quotes
  scratch.clear();
  out.put('"');
  while (!text.empty()) {
    // Cut before a byte that is not a UTF-8 continuation byte (or 4 of them later, when no sequence
    // can still be open), so that each piece repairs and escapes as the whole string would.
    std::size_t cut = std::min(text.size(), piece_bytes);
    for (int k = 0; k < 4 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++k) ++cut;
    append_json_string_body(scratch, text.substr(0, cut));
    text.remove_prefix(cut);
    out.write(scratch.data(), static_cast<std::streamsize>(scratch.size()));
    written += scratch.size();
    scratch.clear();
  }
  out.put('"');
  return written;
}

void write_json(std::ostream& out, const boost::json::value& value, int indent) {
  std::string text;
  json_sink sink{text, &out};
  append_json_at(sink, value, indent, 0);
  sink.flush();
}

json_object_writer::json_object_writer(std::string& text, std::ostream* stream, int indent, int depth)
    : text_(text), stream_(stream), indent_(indent), depth_(depth) {
  text_ += '{';
}

void json_object_writer::key(std::string_view key) {
  if (!first_member_) text_ += ',';
  first_member_ = false;
  append_newline(text_, indent_, depth_ + 1);
  json_sink sink{text_, stream_};
  sink.string(key);
  text_ += indent_ > 0 ? ": " : ":";
}

void json_object_writer::member(std::string_view key, const boost::json::value& value) {
  this->key(key);
  json_sink sink{text_, stream_};
  append_json_at(sink, value, indent_, depth_ + 1);
  sink.maybe_flush();
}

void json_object_writer::string_member(std::string_view key, std::string_view value) {
  this->key(key);
  json_sink sink{text_, stream_};
  sink.string(value);
  sink.maybe_flush();
}

json_object_writer json_object_writer::object_member(std::string_view key) {
  this->key(key);
  return json_object_writer(text_, stream_, indent_, depth_ + 1);
}

void json_object_writer::begin_array(std::string_view key) {
  this->key(key);
  text_ += '[';
  first_element_ = true;
}

void json_object_writer::element_start() {
  if (!first_element_) text_ += ',';
  first_element_ = false;
  append_newline(text_, indent_, depth_ + 2);
}

json_object_writer json_object_writer::object_element() {
  element_start();
  return json_object_writer(text_, stream_, indent_, depth_ + 2);
}

void json_object_writer::element(const boost::json::value& value) {
  element_start();
  json_sink sink{text_, stream_};
  append_json_at(sink, value, indent_, depth_ + 2);
  sink.maybe_flush();
}

void json_object_writer::end_array() {
  if (!first_element_) append_newline(text_, indent_, depth_ + 1);
  text_ += ']';
}

void json_object_writer::finish() {
  if (!first_member_) append_newline(text_, indent_, depth_);
  text_ += '}';
  if (stream_ != nullptr) json_sink{text_, stream_}.flush();
}

}  // namespace regionprof::report_detail
