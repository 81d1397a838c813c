// Views of saved profiles: a profile read back renders the same Markdown, the HTML page is self-contained,
// the terminal table colours only on request.
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/profile_reader.hpp"
#include "regionprof/saved_report.hpp"
#include "report_fixtures.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(saved_views)

BOOST_AUTO_TEST_CASE(a_saved_profile_renders_the_same_markdown) {
  for (const analysis_result& result : {device_result(), cpu_only_result()}) {
    trace source;
    source.target_type = "fixture";
    const analysis_options options;
    const std::string original = to_markdown(result, source, options, fixed_context());
    const saved_report_input input =
        to_report_input(read_profile_text(to_json(result, source, options, fixed_context()), "fixture.json"));
    const std::string again = to_markdown(input.result, input.source, input.options, input.context);
    BOOST_TEST(again == original);
  }
}

BOOST_AUTO_TEST_CASE(html_page_is_self_contained_and_escaped) {
  analysis_result result = device_result();
  result.regions[1].id = "untuned_module:<head>&\"x\"";
  const std::string page = to_html(result, trace{}, analysis_options{}, fixed_context());
  BOOST_TEST(page.starts_with("<!DOCTYPE html>"));
  BOOST_TEST(contains(page, "untuned_module:&lt;head&gt;&amp;&quot;x&quot;"));
  BOOST_TEST(!contains(page, "<head>&"));
  // A stacked bar per run (CPU and device), a strip chart per domain: 4 charts; the status element.
  BOOST_TEST(occurrences(page, "<svg class=\"chart\"") == 4u);
  BOOST_TEST(contains(page, "<p id=\"rp-status\">rendering</p>"));
  BOOST_TEST(contains(page, "Device time per run"));
  for (const char* external : {"<script src", "<link", "@import", "url(", "<img", "https://"}) {
    BOOST_TEST(!contains(page, external), external);
  }
  // Without device data: no device chart.
  const std::string cpu_only = to_html(cpu_only_result(), trace{}, analysis_options{}, fixed_context());
  BOOST_TEST(!contains(cpu_only, "Device time per run"));
  BOOST_TEST(occurrences(cpu_only, "<svg class=\"chart\"") == 2u);
}

BOOST_AUTO_TEST_CASE(terminal_table_colours_only_on_request) {
  const std::string plain = to_terminal_table(device_result(), trace{}, false);
  const std::string coloured = to_terminal_table(device_result(), trace{}, true);
  BOOST_TEST(!contains(plain, "\x1b["));
  BOOST_TEST(contains(coloured, "\x1b["));
  // Encoder: CPU {600, 0} us -> median 300.000, share 600 000 / 1 234 567 = 48.60 %; device median 125.000,
  // share 250 000 / 400 000 = 62.50 %.
  BOOST_TEST(contains(plain, "aot_module:encoder"));
  BOOST_TEST(contains(plain, "300.000    48.60"), plain);
  BOOST_TEST(contains(plain, "125.000    62.50"), plain);
  BOOST_TEST(contains(plain, "(run total)"));
  for (std::size_t at = plain.find('\n'); at != std::string::npos; at = plain.find('\n', at + 1)) {
    BOOST_TEST(plain[at - 1] != ' ');  // no trailing spaces
  }
}

BOOST_AUTO_TEST_SUITE_END()
