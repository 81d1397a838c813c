// JSON text helpers shared by the report writers: string escaping with UTF-8 repair, exact microsecond
// decimals from integer nanoseconds, and a serializer for boost::json values whose numbers read as
// decimals (Boost.JSON's own serializer writes 1234.567 as `1.234567E3`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace regionprof::report_detail {

/// `text` as a Boost.JSON string view (no copy), for building DOM values from std::string_view.
inline boost::json::string_view sv(std::string_view text) noexcept { return {text.data(), text.size()}; }

/// True when `text` is valid UTF-8 and needs no JSON escaping (no control character, DEL, quote or
/// backslash), so it can be copied between quotes as is.
bool is_plain_json_string(std::string_view text) noexcept;

/// Appends `text` as a quoted JSON string: `"` and `\` escaped, control characters (and DEL) as \n,
/// \t, ... or \u00XX, valid UTF-8 passed through, and each maximal invalid UTF-8 subpart replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view text);

/// append_json_string without the quotes.
void append_json_string_body(std::string& out, std::string_view text);

/// `text` with each maximal invalid UTF-8 subpart replaced by U+FFFD (valid text comes back unchanged).
std::string repair_utf8(std::string_view text);

/// Appends integer nanoseconds as microseconds with exactly 3 decimals, never through a double:
/// 12345678 -> `12345.678`, 999 -> `0.999`, -1500 -> `-1.500`.
void append_us(std::string& out, std::int64_t ns);

/// Appends an integer in decimal.
void append_int(std::string& out, std::int64_t value);
void append_uint(std::string& out, std::uint64_t value);

/// Appends a double as the shortest decimal that reads back as the same double, in fixed notation for
/// 1e-6 <= |v| < 1e15 (1234.567 -> `1234.567`), always with a `.` or an exponent so that it reads back
/// as a double (1000 -> `1000.0`); non-finite values as `null`.
void append_double(std::string& out, double value);

/// Serializes `value` (object members in insertion order). indent 0: compact; indent n > 0: one member
/// or element per line, indented by n spaces per level, starting at level `depth` (for a value nested
/// in text written around it). Strings go through append_json_string.
void append_json(std::string& out, const boost::json::value& value, int indent = 0, int depth = 0);

/// append_json_string's text written to `out` in pieces of about 1 MiB formatted in `scratch` (left
/// empty), for a string too long to copy whole; returns the bytes written.
std::size_t write_json_string(std::ostream& out, std::string& scratch, std::string_view text);

/// append_json to a stream, in pieces of about 1 MiB: the text is never held whole, and a long
/// string goes through in pieces. Stream errors are the caller's to check.
void write_json(std::ostream& out, const boost::json::value& value, int indent = 0);

/// Writes a JSON object member by member in append_json's format, into `text`, handed to `stream`
/// in pieces of about 1 MiB when there is one: a large member (one element per run) is produced and
/// written element by element, never held whole as a DOM. Calls: member, string_member or
/// object_member (then that writer's calls and its finish), or begin_array (then element or
/// object_element... and end_array), in any number, then finish. The object is at `depth` (0: the
/// document; 3: a member's value three levels in, indented as append_json would at that depth).
///
/// ```
/// json_object_writer report(text, &out, 2);
/// report.begin_array("rows");
/// json_object_writer row = report.object_element();
/// row.string_member("key", name);  // a long name goes through in pieces, never copied into a DOM
/// row.finish();
/// report.end_array();
/// report.finish();
/// ```
class json_object_writer {
 public:
  json_object_writer(std::string& text, std::ostream* stream, int indent, int depth = 0);
  json_object_writer(const json_object_writer&) = delete;
  json_object_writer& operator=(const json_object_writer&) = delete;

  void member(std::string_view key, const boost::json::value& value);
  /// A member whose value is the string `value`, written from it (no copy).
  void string_member(std::string_view key, std::string_view value);
  /// A member whose value is an object, written by the returned writer; finish it before this one's
  /// next call.
  json_object_writer object_member(std::string_view key);
  void begin_array(std::string_view key);
  void element(const boost::json::value& value);
  /// An element of the open array that is an object, written by the returned writer; finish it before
  /// this one's next call.
  json_object_writer object_element();
  void end_array();
  /// Closes the object and hands what is left to the stream.
  void finish();

 private:
  void key(std::string_view key);
  void element_start();
  std::string& text_;
  std::ostream* stream_;
  int indent_;
  int depth_;
  bool first_member_ = true;
  bool first_element_ = true;
};

}  // namespace regionprof::report_detail
