// The JSON text helpers behind every report: exact microsecond decimals, number formatting, escaping, the
// member-by-member object writer.
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/json/json_text.hpp"
#include "support/report_fixtures.hpp"

using namespace regionprof::report_detail;

namespace {

std::string us_text(std::int64_t ns) {
  std::string out;
  append_us(out, ns);
  return out;
}

std::string double_text(double value) {
  std::string out;
  append_double(out, value);
  return out;
}

std::string json_quoted(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json_text)

BOOST_AUTO_TEST_CASE(microseconds_from_integer_nanoseconds) {
  BOOST_TEST(us_text(12345678) == "12345.678");
  BOOST_TEST(us_text(0) == "0.000");
  BOOST_TEST(us_text(999) == "0.999");
  BOOST_TEST(us_text(1000) == "1.000");
  BOOST_TEST(us_text(1001) == "1.001");
  BOOST_TEST(us_text(-1500) == "-1.500");
  BOOST_TEST(us_text(-1) == "-0.001");
  // An epoch timestamp a double cannot hold to the nanosecond stays exact.
  BOOST_TEST(us_text(1695835542514261123) == "1695835542514261.123");
  BOOST_TEST(us_text(std::numeric_limits<std::int64_t>::max()) == "9223372036854775.807");
  BOOST_TEST(us_text(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775.808");
}

BOOST_AUTO_TEST_CASE(doubles_read_as_decimals) {
  BOOST_TEST(double_text(1234567 / 1000.0) == "1234.567");
  BOOST_TEST(double_text(1000.0) == "1000.0");
  BOOST_TEST(double_text(0.0) == "0.0");
  BOOST_TEST(double_text(0.5) == "0.5");
  BOOST_TEST(double_text(-2.25) == "-2.25");
  BOOST_TEST(double_text(1.0 / 3.0) == "0.3333333333333333");
  BOOST_TEST(double_text(1e20) == "1e+20");
  BOOST_TEST(double_text(1e-9) == "1e-09");
  BOOST_TEST(double_text(std::nan("")) == "null");
  BOOST_TEST(double_text(std::numeric_limits<double>::infinity()) == "null");
}

BOOST_AUTO_TEST_CASE(strings_are_escaped_and_utf8_repaired) {
  BOOST_TEST(json_quoted("plain") == "\"plain\"");
  BOOST_TEST(json_quoted("a\"b\\c") == "\"a\\\"b\\\\c\"");
  BOOST_TEST(json_quoted("l1\nl2\tx\r\b\f") == "\"l1\\nl2\\tx\\r\\b\\f\"");
  BOOST_TEST(json_quoted(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
  BOOST_TEST(json_quoted(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  BOOST_TEST(json_quoted("del\x7f") == "\"del\\u007f\"");  // Perfetto's tokenizer rejects a raw DEL
  BOOST_TEST(json_quoted("é✓😀") == "\"é✓😀\"");  // valid UTF-8 passes through
  const std::string fffd = "\xEF\xBF\xBD";
  BOOST_TEST(json_quoted("a\xff" "b") == "\"a" + fffd + "b\"");
  BOOST_TEST(json_quoted("\xC0\x80") == "\"" + fffd + fffd + "\"");              // overlong NUL: two bad bytes
  BOOST_TEST(json_quoted("x\xE2\x82") == "\"x" + fffd + "\"");                  // truncated ✓: one maximal subpart
  BOOST_TEST(json_quoted("\xED\xA0\x80") == "\"" + fffd + fffd + fffd + "\"");  // UTF-16 surrogate
  BOOST_TEST(json_quoted("\xF4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // above U+10FFFF
  BOOST_TEST(repair_utf8("ok é") == "ok é");
  BOOST_TEST(repair_utf8("\xE2\x82z") == fffd + "z");

  BOOST_TEST(is_plain_json_string("aten::mm <float>"));
  BOOST_TEST(is_plain_json_string("é✓"));
  BOOST_TEST(!is_plain_json_string("a\"b"));
  BOOST_TEST(!is_plain_json_string("a\nb"));
  BOOST_TEST(!is_plain_json_string("a\xff"));
  BOOST_TEST(!is_plain_json_string("a\x7f"));

  // Whatever goes in, a JSON parser that checks UTF-8 reads the result back.
  const std::string nasty = std::string("q\"\\\n\x01\x7f é \xff\xfe \xE2\x82 ") + std::string(1, '\0');
  const auto parsed = report_test::parse(json_quoted(nasty));
  BOOST_TEST(report_test::str(parsed) == "q\"\\\n\x01\x7f é " + fffd + fffd + " " + fffd + " " + std::string(1, '\0'));
}

// The writer's nested objects and string members give append_json's text of the same DOM, to a string
// and through a stream in pieces (a string of 3 MiB is written through, not copied into a DOM).
BOOST_AUTO_TEST_CASE(object_writer_nests_objects_as_append_json_does) {
  const std::string long_name(3u << 20, 'x');
  boost::json::object dom;
  dom["a"] = 1;
  boost::json::object inner;
  inner["name"] = boost::json::string(long_name);
  inner["rows"] = boost::json::array{boost::json::object{{"key", "k\"1"}, {"n", 2}}, boost::json::object{}};
  dom["inner"] = inner;
  dom["empty"] = boost::json::array{};
  std::string expected;
  append_json(expected, dom, 2);
  const auto write = [&](std::string& text, std::ostream* stream) {
    json_object_writer top(text, stream, 2);
    top.member("a", 1);
    json_object_writer nested = top.object_member("inner");
    nested.string_member("name", long_name);
    nested.begin_array("rows");
    json_object_writer row = nested.object_element();
    row.string_member("key", "k\"1");
    row.member("n", 2);
    row.finish();
    nested.object_element().finish();
    nested.end_array();
    nested.finish();
    top.begin_array("empty");
    top.end_array();
    top.finish();
  };
  std::string text;
  write(text, nullptr);
  BOOST_TEST(text == expected);
  std::ostringstream out;
  std::string scratch;
  write(scratch, &out);
  BOOST_TEST(out.str() == expected);
}

BOOST_AUTO_TEST_SUITE_END()
