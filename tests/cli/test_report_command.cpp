// `regionprof report`: a saved profile rendered as Markdown, a terminal table and HTML.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli_runner.hpp"
#include "test_profiles.hpp"

using cli_test::read_file;
using cli_test::run_cli;
using cli_test::temp_path;

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
}  // namespace

BOOST_AUTO_TEST_SUITE(report_command)

BOOST_AUTO_TEST_CASE(markdown_of_a_saved_profile_reads_top_down) {
  const auto r = run_cli({"report", cli_test::pipeline_profile_a()});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.starts_with("# regionprof report\n"), r.out);
  BOOST_TEST(contains(r.out, "- Target: `cpu_pipeline`\n"), r.out);
  const auto summary = r.out.find("\n## Summary\n");
  const auto runs = r.out.find("\n## Runs\n");
  BOOST_TEST_REQUIRE(summary != std::string::npos);
  BOOST_TEST_REQUIRE(runs != std::string::npos);
  BOOST_TEST(summary < runs);
  // 20 runs: above the default of 5, no per-run table unless asked for.
  BOOST_TEST(!contains(r.out, "### Run 0\n"), r.out);
  BOOST_TEST(contains(r.out, "Per-run tables for 0 of 20 runs"), r.out);
  const auto detailed = run_cli({"report", "--runs-detail", "2", cli_test::pipeline_profile_a()});
  BOOST_TEST(contains(detailed.out, "### Run 1\n"), detailed.out);
  BOOST_TEST(!contains(detailed.out, "### Run 2\n"), detailed.out);
  BOOST_TEST(contains(r.out, "\n## Warnings\n"), r.out);
}

BOOST_AUTO_TEST_CASE(table_is_plain_text_off_a_terminal) {
  const auto r = run_cli({"report", "--format", "table", cli_test::pipeline_profile_a()});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(!contains(r.out, "\x1b["), "no colour when stdout is not a terminal");
  BOOST_TEST(contains(r.out, "aot_module:parser"), r.out);
  BOOST_TEST(contains(r.out, "(residual)"), r.out);
  BOOST_TEST(contains(r.out, "(run total)"), r.out);
  BOOST_TEST(contains(r.out, "\u2588"), "a bar per region");
  BOOST_TEST(contains(r.out, "median CPU us"), r.out);
}

BOOST_AUTO_TEST_CASE(html_is_one_self_contained_file) {
  const std::string out = temp_path("report.html");
  const auto r = run_cli({"report", "--format", "html", "-o", out, cli_test::pipeline_profile_a()});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.empty());
  const std::string page = read_file(out);
  BOOST_TEST(page.starts_with("<!DOCTYPE html>"));
  BOOST_TEST(contains(page, "<svg"));
  BOOST_TEST(contains(page, "<script>"));
  BOOST_TEST(contains(page, "aot_module:parser"));
  BOOST_TEST(contains(page, "run 19"));  // a stacked bar per run
  // Nothing to fetch: no external script, style sheet, font or image.
  for (const char* external : {"<script src", "<link", "@import", "url(", "<img", "https://"}) {
    BOOST_TEST(!contains(page, external), "the page references " << external);
  }
}

BOOST_AUTO_TEST_CASE(errors) {
  const auto r = run_cli({"report", cli_test::data_file("basic.json")});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "basic.json"), r.err);
  const auto format = run_cli({"report", "--format", "pdf", "p.json"});
  BOOST_TEST(format.exit_code == 2);
  BOOST_TEST(contains(format.err, "expected markdown, table or html"), format.err);
  BOOST_TEST(run_cli({"report"}).exit_code == 2);
  const auto detail = run_cli({"report", "--runs-detail", "2.5", "p.json"});
  BOOST_TEST(detail.exit_code == 2);
  BOOST_TEST(contains(detail.err, "option --runs-detail needs a whole number from 0 to 1000000000, got '2.5'"),
             detail.err);  // the one whole-number parser (parse_count), as --row-limit
}

BOOST_AUTO_TEST_SUITE_END()
