// Views of saved profiles: a profile read back renders the same Markdown, the HTML page is self-contained,
// the HTML fragment is scoped to its root, the terminal table colours only on request and lists each
// region's first ops.
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "support/report_fixtures.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// Three runs (CPU totals 1000, 1200, 800 us: median 1000) with the tree
///   r:a {500, 500, 500} us  >  r:<c> {200, 300, absent} us     r:b {250, 300, 200} us
/// depth-first a, a > c, b. Medians: a 500, c 200 (the absent run counts 0), b 250.
analysis_result tree_result() {
  analysis_result result;
  result.regions = {{"r:a", "a", "r", "-"}, {"r:b", "b", "r", "-"}};
  result.tree_regions = result.regions;
  result.tree_regions.push_back({"r:<c>", "<c>", "r", "-"});
  result.has_region_tree = true;
  const std::int64_t totals_us[] = {1000, 1200, 800}, b_values[] = {250, 300, 200}, c_us[] = {200, 300, 0};
  for (std::size_t i = 0; i < 3; ++i) {
    run_result run;
    run.run_index = i;
    run.cpu_time_ns = run.wall_time_ns = totals_us[i] * 1000;
    run.regions = {{0, 1, 500'000, std::nullopt, std::nullopt}, {1, 1, b_values[i] * 1000, std::nullopt, std::nullopt}};
    run.residual_cpu_ns = run.cpu_time_ns - 500'000 - b_values[i] * 1000;
    run.tree.push_back({0, tree_node::no_parent, 0, 1, 500'000, 500'000 - c_us[i] * 1000, std::nullopt, std::nullopt});
    if (c_us[i] != 0) run.tree.push_back({2, 0, 1, 1, c_us[i] * 1000, c_us[i] * 1000, std::nullopt, std::nullopt});
    run.tree.push_back({1, tree_node::no_parent, 0, 1, b_values[i] * 1000, b_values[i] * 1000, std::nullopt, std::nullopt});
    result.runs.push_back(std::move(run));
  }
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(saved_views)

BOOST_AUTO_TEST_CASE(a_saved_profile_renders_the_same_markdown) {
  for (const analysis_result& result : {device_result(), cpu_only_result()}) {
    trace source;
    source.target.type = "fixture";
    const analysis_options options;
    const std::string original = to_markdown(Profile(source, options, fixed_context(), result));
    const Profile saved = read_profile_text(to_json(Profile(source, options, fixed_context(), result)), "fixture.json");
    const std::string again = to_markdown(saved);
    BOOST_TEST(again == original);
  }
}

BOOST_AUTO_TEST_CASE(html_page_is_self_contained_and_escaped) {
  analysis_result result = device_result();
  result.regions[1].id = "untuned_module:<head>&\"x\"";
  const std::string page = to_html(Profile(trace{}, analysis_options{}, fixed_context(), result));
  BOOST_TEST(page.starts_with("<!DOCTYPE html>"));
  BOOST_TEST(contains(page, "untuned_module:&lt;head&gt;&amp;&quot;x&quot;"));
  BOOST_TEST(!contains(page, "<head>&"));
  // A stacked bar per run (CPU and device), a strip chart per domain: 4 charts; the status element.
  BOOST_TEST(occurrences(page, "<svg class=\"chart\"") == 4u);
  BOOST_TEST(contains(page, "<p class=\"rp-status\">rendering</p>"));
  BOOST_TEST(contains(page, "Device time per run"));
  for (const char* external : {"<script src", "<link", "@import", "url(", "<img", "https://"}) {
    BOOST_TEST(!contains(page, external), external);
  }
  // Without device data: no device chart.
  const std::string cpu_only = to_html(Profile(trace{}, analysis_options{}, fixed_context(), cpu_only_result()));
  BOOST_TEST(!contains(cpu_only, "Device time per run"));
  BOOST_TEST(occurrences(cpu_only, "<svg class=\"chart\"") == 2u);
}

BOOST_AUTO_TEST_CASE(html_fragment_is_scoped_to_its_root_and_holds_one_id) {
  const Profile profile(trace{}, analysis_options{}, fixed_context(), device_result());
  const std::string fragment = to_html_fragment(profile, "rp-a1");
  BOOST_TEST(fragment.starts_with("<div class=\"regionprof\" id=\"rp-a1\">"));
  BOOST_TEST(fragment.ends_with("</div>\n"));
  for (const char* page_only : {"<!DOCTYPE", "<html", "<head", "<body", "<meta"}) {
    BOOST_TEST(!contains(fragment, page_only), page_only);
  }
  // One id; the script finds its root by it and reaches nothing outside it.
  BOOST_TEST(occurrences(fragment, "id=\"") == 1u);
  BOOST_TEST(occurrences(fragment, "document.") == 1u);
  BOOST_TEST(contains(fragment, "var root = document.getElementById('rp-a1');"));
  BOOST_TEST(!contains(fragment, "window."));
  BOOST_TEST(!contains(fragment, "body.setAttribute"));
  // Every selector of every style rule starts at the root class.
  const std::size_t open = fragment.find("<style>"), close = fragment.find("</style>");
  BOOST_TEST_REQUIRE((open != std::string::npos && close != std::string::npos));
  BOOST_TEST(occurrences(fragment, "<style>") == 1u);
  const std::string css = fragment.substr(open + 7, close - open - 7);
  std::vector<std::string> selectors;
  for (std::size_t at = 0, brace; (brace = css.find('{', at)) != std::string::npos; at = css.find('}', brace) + 1) {
    const std::string rule = css.substr(at, brace - at);
    for (std::size_t from = 0; from <= rule.size();) {
      const std::size_t comma = std::min(rule.find(',', from), rule.size());
      std::string selector = rule.substr(from, comma - from);
      selector.erase(0, selector.find_first_not_of(" \n"));
      selector.erase(selector.find_last_not_of(" \n") + 1);
      selectors.push_back(selector);
      from = comma + 1;
    }
  }
  BOOST_TEST(selectors.size() >= 10u);
  for (const std::string& selector : selectors) {
    BOOST_TEST((selector == ".regionprof" || selector.starts_with(".regionprof ")), selector);
  }
  // Another id: the same fragment but for the id.
  std::string other = to_html_fragment(profile, "rp-b2");
  for (std::size_t at; (at = other.find("rp-b2")) != std::string::npos;) other.replace(at, 5, "rp-a1");
  BOOST_TEST(other == fragment);
  // The page holds the fragment of the id `regionprof-report`, whole.
  BOOST_TEST(contains(to_html(profile), to_html_fragment(profile, "regionprof-report")));
  for (const char* bad : {"", "1rp", "rp a", "rp'a", "rp<a", "a-really-long-id-that-goes-past-sixty-four-characters-by-some-way-x"}) {
    BOOST_CHECK_THROW(to_html_fragment(profile, bad), std::invalid_argument);
  }
}

// docs/design.md, rule 20: before the key averages, a <details> per region and one for the residual,
// each expanding to its rows (all of them: the JSON report's), escaped, sortable; nothing without them.
BOOST_AUTO_TEST_CASE(html_expands_each_region_to_its_ops) {
  analysis_result result = device_result_with_ops();
  result.region_ops[0].rows[5].key = "aten::<relu>";
  const std::string page = to_html(Profile(trace{}, analysis_options{}, fixed_context(), result));
  BOOST_TEST(occurrences(page, "<details class=\"region-ops\">") == 3u);
  BOOST_TEST(contains(page, "<code>aot_module:encoder</code> (6 ops)</summary><table class=\"sortable\">"));
  BOOST_TEST(contains(page, "<code>untuned_module:head</code> (0 ops)</summary><p>No ops.</p></details>"));
  BOOST_TEST(contains(page, "(residual) (1 op)</summary><table class=\"sortable\">"));
  BOOST_TEST(contains(page, "<code>aten::&lt;relu&gt;</code>"));  // the sixth row: the page holds every row
  BOOST_TEST(contains(page, "<code>cudaDeviceSynchronize</code>"));
  BOOST_TEST(page.find("<h2>Ops per region</h2>") < page.find("<h2>Key averages</h2>"));
  const std::string section = page.substr(page.find("<h2>Ops per region</h2>"));
  BOOST_TEST(occurrences(section.substr(0, section.find("<h2>Key averages</h2>")), "<tr>") == 2u + 6u + 1u);
  BOOST_TEST(!contains(to_html(Profile(trace{}, analysis_options{}, fixed_context(), device_result())), "region-ops"));
}

BOOST_AUTO_TEST_CASE(html_icicle_draws_one_rect_per_tree_node) {
  const analysis_result result = tree_result();
  const std::string page = to_html(Profile(trace{}, analysis_options{}, fixed_context(), result));
  BOOST_TEST(occurrences(page, "<svg class=\"chart icicle\"") == 1u);
  BOOST_TEST(occurrences(page, "<rect class=\"icicle-node\"") == 3u);
  // Width 900 px * median inclusive / 1000 us: a 450, a > c 180 below a from its left edge, b 225 after a.
  BOOST_TEST(contains(page, "<rect class=\"icicle-node\" x=\"0.00\" y=\"0.0\" width=\"450.00\""), page);
  BOOST_TEST(contains(page, "<rect class=\"icicle-node\" x=\"0.00\" y=\"20.0\" width=\"180.00\""));
  BOOST_TEST(contains(page, "<rect class=\"icicle-node\" x=\"450.00\" y=\"0.0\" width=\"225.00\""));
  // Self medians: a {300, 200, 500} -> 300; c {200, 300, 0} -> 200. The id is escaped.
  BOOST_TEST(contains(page, "<title>r:a: inclusive 500.000 us, self 300.000 us</title>"));
  BOOST_TEST(contains(page, "<title>r:&lt;c&gt;: inclusive 200.000 us, self 200.000 us</title>"));
  BOOST_TEST(!contains(page, "r:<c>"));
  // Read back from the JSON report, the same chart.
  const Profile saved = read_profile_text(to_json(Profile(trace{}, analysis_options{}, fixed_context(), result)), "t.json");
  const std::string again = to_html(saved);
  const auto chart = [](const std::string& html) {
    const std::size_t from = html.find("<svg class=\"chart icicle\"");
    return from == std::string::npos ? std::string() : html.substr(from, html.find("</svg>", from) - from);
  };
  BOOST_TEST(!chart(page).empty());
  BOOST_TEST(chart(again) == chart(page));
  // No tree: no chart.
  BOOST_TEST(!contains(to_html(Profile(trace{}, analysis_options{}, fixed_context(), device_result())), "icicle"));
}

BOOST_AUTO_TEST_CASE(terminal_table_colours_only_on_request) {
  const std::string plain = to_terminal_table(Profile(trace{}, analysis_options{}, report_context{}, device_result()), false);
  const std::string coloured = to_terminal_table(Profile(trace{}, analysis_options{}, report_context{}, device_result()), true);
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

// docs/design.md, rule 20: after the regions, each region's first 5 ops (type, total us in the row's own
// domain, count, name), how many more, and the residual's; nothing without region ops.
BOOST_AUTO_TEST_CASE(terminal_table_lists_each_regions_first_ops) {
  const std::string plain =
      to_terminal_table(Profile(trace{}, analysis_options{}, report_context{}, device_result_with_ops()), false);
  BOOST_TEST_MESSAGE(plain);
  const std::size_t ops = plain.find("\nops per region: the first 5, by total us in the row's own domain (CPU or device)\n");
  BOOST_TEST_REQUIRE(ops != std::string::npos);
  BOOST_TEST(ops > plain.find("(run total)"));
  BOOST_TEST(contains(plain, "\naot_module:encoder\n"
                             "  CPU          300.000        4x  aten::mm\n"
                             "  CUDA         200.000        6x  gemm_kernel\n"
                             "  CPU           80.000        8x  cudaLaunchKernel\n"
                             "  CUDA          50.000        2x  Memcpy HtoD\n"
                             "  CPU            3.000        2x  aten::add\n"
                             "  ... 1 more\n"
                             "untuned_module:head\n"
                             "  (no ops)\n"
                             "(residual)\n"
                             "  CPU            0.500        1x  cudaDeviceSynchronize\n"));
  for (std::size_t at = plain.find('\n'); at != std::string::npos; at = plain.find('\n', at + 1)) {
    BOOST_TEST(plain[at - 1] != ' ');  // no trailing spaces
  }
  BOOST_TEST(!contains(to_terminal_table(Profile(trace{}, analysis_options{}, report_context{}, device_result()), false),
                       "ops per region"));
}

// docs/design.md, rule 21: after the regions' table, per region, the residual and the run total one line
// per device with the summaries' medians (report_fixtures.hpp, memory_result); nothing without figures.
BOOST_AUTO_TEST_CASE(terminal_table_lists_memory_per_region_and_device) {
  const std::string plain =
      to_terminal_table(Profile(trace{}, analysis_options{}, report_context{}, memory_result()), false);
  BOOST_TEST_MESSAGE(plain);
  const std::size_t memory = plain.find("\nmemory per region: medians over 2 runs (no event: 0); peak: over the runs "
                                        "with one\n");
  BOOST_TEST_REQUIRE(memory != std::string::npos);
  BOOST_TEST(memory > plain.find("(run total)"));
  // As the Markdown section (test_markdown_report.cpp, memory_section_shows_the_medians_per_device).
  BOOST_TEST(contains(plain, "\nregion               device      allocated         freed        allocs          peak\n"
                             "aot_module:encoder   cpu          3.00 KiB      1.50 KiB           1.5      7.00 KiB\n"
                             "aot_module:encoder   cuda:0     512.00 KiB           0 B           0.5      3.00 MiB\n"
                             "untuned_module:head  cuda:0          256 B         256 B           0.5             -\n"
                             "(residual)           cpu              50 B           0 B           0.5             -\n"
                             "(run total)          cpu          3.05 KiB      1.50 KiB             2      7.39 KiB\n"
                             "(run total)          cuda:0     512.25 KiB         256 B             1      3.00 MiB\n"
                             "run 0, cpu: peak 8.79 KiB at 1234.567 us, in untuned_module:head\n"
                             "run 0, cuda:0: peak 3.00 MiB at 0.000 us, in aot_module:encoder\n"));
  for (std::size_t at = plain.find('\n'); at != std::string::npos; at = plain.find('\n', at + 1)) {
    BOOST_TEST(plain[at - 1] != ' ');  // no trailing spaces
  }
  const Profile plain_profile(trace{}, analysis_options{}, report_context{}, device_result());
  BOOST_TEST(!contains(to_terminal_table(plain_profile, false), "memory per region"));
}

// Rule 21 in the HTML page: after the summary, a sortable table per region, the residual and the run
// total, one row per device, bytes as numbers (binary units in each cell's title); nothing without figures.
BOOST_AUTO_TEST_CASE(html_memory_table_per_region_and_device) {
  const std::string page = to_html(Profile(trace{}, analysis_options{}, fixed_context(), memory_result()));
  BOOST_TEST_REQUIRE(contains(page, "<h2>Memory</h2>"));
  BOOST_TEST(page.find("<h2>Summary</h2>") < page.find("<h2>Memory</h2>"));
  BOOST_TEST(page.find("<h2>Memory</h2>") < page.find("<h2>CPU time per run</h2>"));
  const std::string section = page.substr(page.find("<h2>Memory</h2>"), page.find("<h2>CPU time per run</h2>") -
                                                                            page.find("<h2>Memory</h2>"));
  BOOST_TEST(occurrences(section, "<tr>") == 1u + 6u);  // the heading, 6 rows
  BOOST_TEST(contains(section, "<tr><td><code>aot_module:encoder</code></td><td>cpu</td>"
                               "<td class=\"n\" title=\"3.00 KiB\">3072</td>"
                               "<td class=\"n\" title=\"1.50 KiB\">1536</td>"
                               "<td class=\"n\">1.5</td><td class=\"n\">1</td>"
                               "<td class=\"n\" title=\"7.00 KiB\">7168</td></tr>"),
             section);
  BOOST_TEST(contains(section, "<tr><td><code>untuned_module:head</code></td><td>cuda:0</td>"
                               "<td class=\"n\" title=\"256 B\">256</td><td class=\"n\" title=\"256 B\">256</td>"
                               "<td class=\"n\">0.5</td><td class=\"n\">0.5</td><td class=\"n\">-</td></tr>"));
  BOOST_TEST(contains(section, "<tr><td>(run total)</td><td>cuda:0</td>"
                               "<td class=\"n\" title=\"512.25 KiB\">524544</td>"));
  const Profile plain(trace{}, analysis_options{}, fixed_context(), device_result());
  BOOST_TEST(!contains(to_html(plain), "<h2>Memory</h2>"));
}

// Rule 21 in the HTML page: after the memory table, per charted run and device, the total allocated as a
// step line (0 before the first sample, each level held to the next sample and the last to the run's end),
// its peak as a dot, and the run's topmost instances beneath in lanes (report_fixtures.hpp, memory_result:
// run 0 of 1 234.567 us). x = 70 + 810 * us / 1234.567 px, y = 10 + 160 * (1 - bytes / peak) px.
BOOST_AUTO_TEST_CASE(html_memory_over_time_charts_each_device_of_the_charted_runs) {
  const std::string page = to_html(Profile(trace{}, analysis_options{}, fixed_context(), memory_result()));
  BOOST_TEST_REQUIRE(contains(page, "<h2>Memory over time</h2>"));
  BOOST_TEST(page.find("<h2>Memory</h2>") < page.find("<h2>Memory over time</h2>"));
  BOOST_TEST(page.find("<h2>Memory over time</h2>") < page.find("<h2>CPU time per run</h2>"));
  const std::size_t begin = page.find("<h2>Memory over time</h2>");
  const std::string section = page.substr(begin, page.find("<h2>CPU time per run</h2>") - begin);
  BOOST_TEST(occurrences(section, "<svg class=\"chart step\"") == 2u);  // cpu, cuda:0
  BOOST_TEST(section.find("<h3>run 0, cpu: peak 8.79 KiB at 1234.567 us, in <code>untuned_module:head</code></h3>") <
             section.find("<h3>run 0, cuda:0: peak 3.00 MiB at 0.000 us, in <code>aot_module:encoder</code></h3>"));
  // Two lanes: 10 + 160 + 8 + 2 x 12 + 22 px high.
  BOOST_TEST(contains(section, "<svg class=\"chart step\" viewBox=\"0 0 900.0 224.0\""));
  BOOST_TEST(contains(section, "points=\"70.00,170.00 70.00,170.00 70.00,90.00 880.00,90.00 880.00,10.00 "
                               "880.00,10.00\""),
             section);
  BOOST_TEST(contains(section, "points=\"70.00,170.00 70.00,170.00 70.00,10.00 880.00,10.00\""));
  BOOST_TEST(contains(section, "<circle class=\"dot\" cx=\"880.00\" cy=\"10.00\" r=\"3.5\" fill=\"#e15759\">"
                               "<title>peak 8.79 KiB at 1234.567 us</title></circle>"));
  BOOST_TEST(contains(section, "<rect class=\"seg\" x=\"70.00\" y=\"178.0\" width=\"405.00\" height=\"10.0\" "
                               "fill=\"#4e79a7\"><title>aot_module:encoder: 0.000 to 617.283 us</title></rect>"));
  BOOST_TEST(contains(section, "<rect class=\"seg\" x=\"135.61\" y=\"190.0\" width=\"65.61\" height=\"10.0\" "
                               "fill=\"#f28e2b\"><title>untuned_module:head: 100.000 to 200.000 us</title></rect>"));
  BOOST_TEST(contains(section, "<rect class=\"seg\" x=\"475.00\" y=\"178.0\" width=\"405.00\""));
  BOOST_TEST(contains(section, "<p>2 later region instances of run 0 are not drawn.</p>"));
  const Profile plain(trace{}, analysis_options{}, fixed_context(), device_result());
  BOOST_TEST(!contains(to_html(plain), "Memory over time"));
}

BOOST_AUTO_TEST_SUITE_END()
