// microseconds_text_to_ns: exact conversion from the number's text, round half to even past 3 decimals.
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <boost/test/unit_test.hpp>

#include "regionprof/import/import.hpp"

using regionprof::microseconds_text_to_ns;

namespace {
std::int64_t ns(std::string_view text) {
  const auto value = microseconds_text_to_ns(text);
  BOOST_TEST_REQUIRE(value.has_value(), "'" << text << "' should convert");
  return *value;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(microseconds)

BOOST_AUTO_TEST_CASE(integers_and_up_to_three_decimals_are_exact) {
  BOOST_TEST(ns("0") == 0);
  BOOST_TEST(ns("1") == 1000);
  BOOST_TEST(ns("68.0") == 68000);
  BOOST_TEST(ns("100.5") == 100500);
  BOOST_TEST(ns("12.25") == 12250);
  BOOST_TEST(ns("0.001") == 1);
  BOOST_TEST(ns("-12.5") == -12500);
  BOOST_TEST(ns("-0") == 0);
  // Epoch-sized values: a double keeps ~16 significant digits and would lose these ns.
  BOOST_TEST(ns("1682725898236567") == 1682725898236567000);
  BOOST_TEST(ns("1682725898236567.123") == 1682725898236567123);
  BOOST_TEST(ns("1695835542514261.999") == 1695835542514261999);
  BOOST_TEST(static_cast<std::int64_t>(1682725898236567.123 * 1000.0) != 1682725898236567123);  // why
}

BOOST_AUTO_TEST_CASE(exponents_shift_the_digits) {
  BOOST_TEST(ns("1.5e3") == 1500000);
  BOOST_TEST(ns("25E-1") == 2500);
  BOOST_TEST(ns("1e0") == 1000);
  BOOST_TEST(ns("1.682725898236567123e15") == 1682725898236567123);
  BOOST_TEST(ns("16827258982365671230e-4") == 1682725898236567123);
  BOOST_TEST(ns("0.000000001e9") == 1000);
  BOOST_TEST(ns("1e-3") == 1);
  BOOST_TEST(ns("5e-4") == 0);   // 0.5 ns: half to even -> 0
  BOOST_TEST(ns("15e-4") == 2);  // 1.5 ns -> 2
  BOOST_TEST(ns("1E+2") == 100000);
}

BOOST_AUTO_TEST_CASE(more_than_three_decimals_round_half_to_even) {
  BOOST_TEST(ns("0.0005") == 0);
  BOOST_TEST(ns("0.0015") == 2);
  BOOST_TEST(ns("0.0025") == 2);
  BOOST_TEST(ns("0.0035") == 4);
  BOOST_TEST(ns("0.00251") == 3);   // above half
  BOOST_TEST(ns("0.00249") == 2);   // below half
  BOOST_TEST(ns("-0.0025") == -2);  // symmetric
  BOOST_TEST(ns("-0.0035") == -4);
  BOOST_TEST(ns("1682725898236567.1234999") == 1682725898236567123);
  BOOST_TEST(ns("1682725898236567.1235") == 1682725898236567124);  // tie, 123 odd -> 124
  BOOST_TEST(ns("1682725898236567.1245") == 1682725898236567124);  // tie, 124 even -> 124
  BOOST_TEST(ns("1.00050000001") == 1001);                         // just above a tie
  // Digits beyond what 128 bits keep still break ties (sticky).
  BOOST_TEST(ns("0.00250000000000000000000000000000000000000001") == 3);
  BOOST_TEST(ns("0.00250000000000000000000000000000000000000000") == 2);
  BOOST_TEST(ns("0.0000000000000000000000000000000000000000000000001") == 0);
}

BOOST_AUTO_TEST_CASE(limits_of_int64) {
  BOOST_TEST(ns("9223372036854775.807") == std::numeric_limits<std::int64_t>::max());
  BOOST_TEST(ns("-9223372036854775.808") == std::numeric_limits<std::int64_t>::min());
  BOOST_TEST(!microseconds_text_to_ns("9223372036854775.808").has_value());
  BOOST_TEST(!microseconds_text_to_ns("-9223372036854775.809").has_value());
  BOOST_TEST(!microseconds_text_to_ns("1e300").has_value());
  BOOST_TEST(ns("1e-300") == 0);
  BOOST_TEST(ns("0e999999999") == 0);
  BOOST_TEST(!microseconds_text_to_ns("123456789012345678901234567890123456789012345").has_value());
}

BOOST_AUTO_TEST_CASE(rejects_what_is_not_a_json_number) {
  for (std::string_view bad : {"", "-", "01", "1.", ".5", "+1", "1e", "1e+", "--1", "1.5x", "0x10", "NaN", "Infinity",
                               " 1", "1 ", "1,5", "1.2.3", "e5", "-.5"}) {
    BOOST_TEST(!microseconds_text_to_ns(bad).has_value(), "'" << bad << "' must be rejected");
  }
}

BOOST_AUTO_TEST_SUITE_END()
