// The Markdown report: sections, a residual row per run, the expected numbers, terminal hygiene.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "support/report_fixtures.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The table row whose first cell is `first` (cells trimmed), split into trimmed cells.
std::vector<std::vector<std::string>> rows_starting_with(const std::string& text, const std::string& first) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(text)) {
    if (line.empty() || line.front() != '|') continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        const auto begin = cell.find_first_not_of(' ');
        const auto end = cell.find_last_not_of(' ');
        cells.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    if (!cells.empty() && cells[0] == first) rows.push_back(cells);
  }
  return rows;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(markdown_report)

BOOST_AUTO_TEST_CASE(sections_and_a_residual_row_per_run) {
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  BOOST_TEST_MESSAGE(text);
  for (const char* heading : {"# regionprof report\n", "\n## Summary\n", "\n## Runs\n", "\n## Regions\n", "\n## Attribution per run\n",
                              "\n### Run 0\n", "\n### Run 1\n", "\n## Key averages\n", "\n### By total CPU time",
                              "\n### By total device time", "\n## Warnings\n"}) {
    BOOST_TEST_INFO("heading " << heading);
    BOOST_TEST(text.find(heading) != std::string::npos);
  }
  BOOST_TEST(text.find("- Tool: regionprof " REGIONPROF_EXPECTED_VERSION ", report created 2024-05-01T12:34:56Z\n") !=
             std::string::npos);
  BOOST_TEST(text.find("- Activities: CPU, CUDA\n") != std::string::npos);
  BOOST_TEST(text.find("- Warnings: 2\n") != std::string::npos);
  BOOST_TEST(text.find("- Runs: 2 analysed (2 measured, 3 warm-up; inference function: yes)\n") != std::string::npos);

  // The summary comes first, then the runs table, then the per-run detail.
  BOOST_TEST(text.find("\n## Summary\n") < text.find("\n## Runs\n"));
  BOOST_TEST(text.find("\n## Runs\n") < text.find("\n## Attribution per run\n"));

  // One residual row per run (after the summary's), with its CPU and device time and shares.
  auto residuals = rows_starting_with(text, "(residual)");
  BOOST_TEST_REQUIRE(residuals.size() == 3u);
  residuals.erase(residuals.begin());
  BOOST_TEST(residuals[0] == (std::vector<std::string>{"(residual)", "-", "600.000", "48.60 %", "-", "100.000", "25.00 %"}),
             boost::test_tools::per_element());
  BOOST_TEST(residuals[1] == (std::vector<std::string>{"(residual)", "-", "0.000", "-", "0.000", "-"}),
             boost::test_tools::per_element());
  auto totals = rows_starting_with(text, "(run total)");
  BOOST_TEST_REQUIRE(totals.size() == 3u);
  totals.erase(totals.begin());
  BOOST_TEST(totals[0][2] == "1234.567");
  BOOST_TEST(totals[0][3] == "100.00 %");

  // Region rows of run 0: encoder 600 000 / 1 234 567 = 48.60 %, head 34 567 / 1 234 567 = 2.80 %.
  auto encoder = rows_starting_with(text, "`aot_module:encoder`");
  BOOST_TEST_REQUIRE(encoder.size() == 5u);  // summary, regions table, run 0, run 1, key averages
  // Summary: CPU {600, 0} us: median 300, share 600 000 / 1 234 567 = 48.60 %, MAD 300, cv 300 sqrt 2 / 300
  // = 141.42 %; device {250, 0}: median 125, share 250 000 / 400 000 = 62.50 %, MAD 125.
  // (head has off-thread time, so the summary has that column; encoder has none: "-".)
  BOOST_TEST(encoder[0] == (std::vector<std::string>{"`aot_module:encoder`", "2", "300.000", "48.60 %", "300.000",
                                                     "141.42 %", "-", "125.000", "62.50 %", "125.000"}),
             boost::test_tools::per_element());
  encoder.erase(encoder.begin());
  BOOST_TEST(encoder[1] == (std::vector<std::string>{"`aot_module:encoder`", "2", "600.000", "48.60 %", "-", "250.000",
                                                     "62.50 %"}),
             boost::test_tools::per_element());
  BOOST_TEST(encoder[0] == (std::vector<std::string>{"`aot_module:encoder`", "aot_module", "-", "2", "3", "300.000",
                                                     "125.000"}),
             boost::test_tools::per_element());
  const auto head = rows_starting_with(text, "`untuned_module:head`");
  BOOST_TEST_REQUIRE(head.size() == 3u);
  BOOST_TEST(head[2] == (std::vector<std::string>{"`untuned_module:head`", "1", "34.567", "2.80 %", "12.345", "50.000",
                                                  "12.50 %"}),
             boost::test_tools::per_element());

  // Runs table and key averages.
  const auto run0 = rows_starting_with(text, "0");
  BOOST_TEST_REQUIRE(run0.size() == 1u);
  BOOST_TEST(run0[0] == (std::vector<std::string>{"0", "1500.000", "1234.567", "400.000", "300.000", "500.000"}),
             boost::test_tools::per_element());
  const auto mm = rows_starting_with(text, "`aten::mm`");
  BOOST_TEST_REQUIRE(mm.size() == 1u);
  BOOST_TEST(mm[0] == (std::vector<std::string>{"`aten::mm`", "CPU", "4", "100.000", "300.000", "0.000", "200.000"}),
             boost::test_tools::per_element());
  BOOST_TEST(text.find("(sorted by `device_time_total`, row limit 5)") != std::string::npos);
  BOOST_TEST(text.find("- `DROPPED_DEVICE_RECORDS` (cupti): 17 device records were dropped; raise the buffer size "
                       "to 8 MiB\n") != std::string::npos);
}

// docs/design.md, rule 20: after the region tree, before the key averages: each region's first 5 rows,
// how many more the JSON report holds, "No ops." for a region without any, then the residual's.
BOOST_AUTO_TEST_CASE(ops_per_region_show_the_first_five_rows_of_each_region) {
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), device_result_with_ops()));
  BOOST_TEST_MESSAGE(text);
  const std::size_t section = text.find("\n## Ops per region\n");
  BOOST_TEST_REQUIRE(section != std::string::npos);
  BOOST_TEST(section > text.find("\n## Attribution per run\n"));
  BOOST_TEST(section < text.find("\n## Key averages\n"));
  const std::string ops = text.substr(section, text.find("\n## Key averages\n") - section);
  BOOST_TEST(ops.find("\n### `aot_module:encoder`\n") != std::string::npos);
  BOOST_TEST(ops.find("\n### `untuned_module:head`\n\nNo ops.\n") != std::string::npos);
  BOOST_TEST(ops.find("\n### (residual)\n") != std::string::npos);
  BOOST_TEST(ops.find("1 more in the JSON report.") != std::string::npos);
  BOOST_TEST(ops.find("`aten::relu`") == std::string::npos);  // the sixth row
  const auto mm = rows_starting_with(ops, "`aten::mm`");
  BOOST_TEST_REQUIRE(mm.size() == 1u);
  BOOST_TEST(mm[0] == (std::vector<std::string>{"`aten::mm`", "CPU", "4", "100.000", "300.000", "0.000", "200.000"}),
             boost::test_tools::per_element());
  const auto gemm = rows_starting_with(ops, "`gemm_kernel`");
  BOOST_TEST_REQUIRE(gemm.size() == 1u);
  BOOST_TEST(gemm[0] == (std::vector<std::string>{"`gemm_kernel`", "CUDA", "6", "0.000", "0.000", "200.000", "200.000"}),
             boost::test_tools::per_element());
  BOOST_TEST(rows_starting_with(ops, "`cudaDeviceSynchronize`").size() == 1u);
  BOOST_TEST(rows_starting_with(ops, "`aten::add`").size() == 1u);

  const std::string without = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  BOOST_TEST(without.find("## Ops per region") == std::string::npos);
}

// docs/design.md, rule 21: `## Memory` after the summary, per region, the residual and the run total one
// row per device with the summaries' medians (report_fixtures.hpp, memory_result), bytes in binary units;
// nothing without memory figures.
BOOST_AUTO_TEST_CASE(memory_section_shows_the_medians_per_device) {
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), memory_result()));
  BOOST_TEST_MESSAGE(text);
  const std::size_t at = text.find("\n## Memory\n");
  BOOST_TEST_REQUIRE(at != std::string::npos);
  BOOST_TEST(text.find("\n## Summary\n") < at);
  BOOST_TEST(at < text.find("\n## Runs\n"));
  const std::string section = text.substr(at, text.find("\n## Runs\n") - at);
  using row = std::vector<std::string>;
  const auto heading = rows_starting_with(section, "region");
  BOOST_TEST_REQUIRE(heading.size() == 1u);
  BOOST_TEST(heading[0] == (row{"region", "device", "median allocated", "median freed", "median allocations",
                                "median frees", "median peak"}),
             boost::test_tools::per_element());
  const auto encoder = rows_starting_with(section, "`aot_module:encoder`");
  BOOST_TEST_REQUIRE(encoder.size() == 2u);
  // cpu: allocated {4096, 2048} -> 3072 B, freed {1024, 2048} -> 1536 B, allocations {2, 1}, frees {1, 1},
  // peaks {8192, 6144} -> 7168 B.
  BOOST_TEST(encoder[0] == (row{"`aot_module:encoder`", "cpu", "3.00 KiB", "1.50 KiB", "1.5", "1", "7.00 KiB"}),
             boost::test_tools::per_element());
  // cuda:0 in run 0 only: {1048576, 0} -> 512 KiB; the peak of run 0 alone, 3 MiB.
  BOOST_TEST(encoder[1] == (row{"`aot_module:encoder`", "cuda:0", "512.00 KiB", "0 B", "0.5", "0", "3.00 MiB"}),
             boost::test_tools::per_element());
  const auto head = rows_starting_with(section, "`untuned_module:head`");
  BOOST_TEST_REQUIRE(head.size() == 1u);
  BOOST_TEST(head[0] == (row{"`untuned_module:head`", "cuda:0", "256 B", "256 B", "0.5", "0.5", "-"}),
             boost::test_tools::per_element());
  const auto residual = rows_starting_with(section, "(residual)");
  BOOST_TEST_REQUIRE(residual.size() == 1u);
  BOOST_TEST(residual[0] == (row{"(residual)", "cpu", "50 B", "0 B", "0.5", "0", "-"}),
             boost::test_tools::per_element());
  const auto total = rows_starting_with(section, "(run total)");
  BOOST_TEST_REQUIRE(total.size() == 2u);
  // cpu {4196, 2048} -> 3122 B = 3.05 KiB, peaks {9000, 6144} -> 7572 B = 7.39 KiB; cuda:0 {1049088, 0} ->
  // 524544 B = 512.25 KiB.
  BOOST_TEST(total[0] == (row{"(run total)", "cpu", "3.05 KiB", "1.50 KiB", "2", "1", "7.39 KiB"}),
             boost::test_tools::per_element());
  BOOST_TEST(total[1] == (row{"(run total)", "cuda:0", "512.25 KiB", "256 B", "1", "0.5", "3.00 MiB"}),
             boost::test_tools::per_element());
  BOOST_TEST(section.find("medians over all 2 runs") != std::string::npos);
  // The charted run's peaks and the regions open then: cpu's at run 0's end (1,234,567 ns, the head's
  // span's closed end), cuda:0's at its start (the encoder's).
  BOOST_TEST(section.find("Peaks of the charted runs (the HTML report draws them over time):\n\n"
                          "- run 0, cpu: peak 8.79 KiB at 1234.567 us, in `untuned_module:head`\n"
                          "- run 0, cuda:0: peak 3.00 MiB at 0.000 us, in `aot_module:encoder`\n") !=
                 std::string::npos,
             section);

  // Units at their edges: one run, so each median is the run's figure.
  analysis_result edges = cpu_only_result();
  edges.memory = {{{cpu_memory, 0, 1023, 1, 1, 1024},
                   {0, 1048575, 1610612736, 2, 3, std::int64_t{5} << 40},
                   {1, std::uint64_t{1} << 62, 0, 0, 0, std::nullopt}}};
  edges.run_memory = {{.run = 0, .residual = no_memory}};
  const std::string edge_text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), edges));
  const auto edge = rows_starting_with(edge_text, "(run total)");
  BOOST_TEST_REQUIRE(edge.size() == 5u);  // summary, memory (3 devices), run 0
  BOOST_TEST(edge[1] == (row{"(run total)", "cpu", "0 B", "1023 B", "1", "1", "1.00 KiB"}),
             boost::test_tools::per_element());
  BOOST_TEST(edge[2] == (row{"(run total)", "cuda:0", "1.00 MiB", "1.50 GiB", "2", "3", "5.00 TiB"}),
             boost::test_tools::per_element());
  BOOST_TEST(edge[3] == (row{"(run total)", "cuda:1", "4.00 EiB", "0 B", "0", "0", "-"}),
             boost::test_tools::per_element());
  BOOST_TEST(rows_starting_with(edge_text, "(residual)").size() == 2u);  // no residual figures: no memory row

  // No figures, or an index to an empty list: no section, the text as before.
  const std::string plain = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  BOOST_TEST(plain.find("Memory") == std::string::npos);
  analysis_result empty = device_result();
  empty.memory = {{}};
  empty.run_memory = {{.run = 0, .residual = no_memory}};
  BOOST_TEST(to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), empty)) == plain);
}

BOOST_AUTO_TEST_CASE(cpu_only_report_leaves_device_columns_out) {
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), cpu_only_result()));
  BOOST_TEST_MESSAGE(text);
  BOOST_TEST(text.find("device (us)") == std::string::npos);
  BOOST_TEST(text.find("By total device time") == std::string::npos);
  BOOST_TEST(text.find("- Activities: CPU (no device data") != std::string::npos);
  const auto residual = rows_starting_with(text, "(residual)");
  BOOST_TEST_REQUIRE(residual.size() == 2u);  // the summary's, then the run's
  // Summary: one run, residual 300 ns: median 0.300, share 30.00 %, MAD 0, cv 0 (one run: stddev 0).
  BOOST_TEST(residual[0] == (std::vector<std::string>{"(residual)", "1", "0.300", "30.00 %", "0.000", "0.00 %"}),
             boost::test_tools::per_element());
  BOOST_TEST(residual[1] == (std::vector<std::string>{"(residual)", "-", "0.300", "30.00 %"}),
             boost::test_tools::per_element());
  BOOST_TEST(text.find("## Warnings\n\nNone.\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(terminal_hygiene_and_determinism) {
  analysis_result result = device_result();
  result.cpu_time_total.rows[0].key = "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
                                      "at::native::AUnaryFunctor<float, float, float, MulFunctor<float> > >(int)";
  result.regions[1].id = "untuned_module:a|b\nc \xff";
  result.regions[0].id = "aot_module:tick`ed";
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), result));
  BOOST_TEST_MESSAGE(text);
  BOOST_TEST(text == to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), result)));
  BOOST_TEST(text.back() == '\n');
  for (const std::string& line : lines_of(text)) {
    BOOST_TEST_INFO("line: [" << line << "]");
    BOOST_TEST((line.empty() || line.back() != ' '));
  }
  // A pipe is escaped, a newline becomes a space, invalid UTF-8 becomes U+FFFD.
  BOOST_TEST(text.find("`untuned_module:a\\|b c \xEF\xBF\xBD`") != std::string::npos);
  // A backtick inside a name gets a longer fence.
  BOOST_TEST(text.find("| `` aot_module:tick`ed `` |") != std::string::npos);
  // A long kernel name is cut to 80 characters: 77 of the name and "...".
  BOOST_TEST(text.find("`void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::n...`") !=
             std::string::npos);
  // Table columns line up: every line of one table has the same width.
  std::size_t width = 0;
  bool in_runs = false;
  for (const std::string& line : lines_of(text)) {
    if (line == "## Runs") in_runs = true;
    if (!in_runs || line.empty() || line.front() != '|') {
      if (in_runs && width != 0) break;
      continue;
    }
    if (width == 0) width = line.size();
    BOOST_TEST(line.size() == width);
  }
  BOOST_TEST(width > 0u);
}

BOOST_AUTO_TEST_CASE(a_pipe_is_escaped_in_table_cells_only) {
  analysis_result result = device_result();
  result.regions[1].id = "untuned_module:a|b";
  analysis_options options;
  options.run_marker = name_rule{match_kind::regex, R"(\[step\|\d+\])", "region", ""};
  const std::string text = to_markdown(Profile(trace{}, options, fixed_context(), result));
  BOOST_TEST_MESSAGE(text);
  // In a table cell GFM needs `\|`; outside tables a code span shows its text as written.
  BOOST_TEST(text.find("`untuned_module:a\\|b`") != std::string::npos);
  BOOST_TEST(text.find("a|b") == std::string::npos);
  BOOST_TEST(text.find("- Run marker: `\\[step\\|\\d+\\]` (regex, any domain)\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(runs_detail_limits_the_per_run_tables) {
  // Six runs of the CPU-only fixture: above the default of 5, only the summary and the runs table.
  analysis_result result = cpu_only_result();
  const run_result run = result.runs[0];
  result.runs.clear();
  for (std::size_t i = 0; i < 6; ++i) {
    result.runs.push_back(run);
    result.runs.back().run_index = i;
  }
  const report_context context = fixed_context();
  markdown_options markdown;
  const std::string text = to_markdown(Profile(trace{}, analysis_options{}, context, result), markdown);
  BOOST_TEST(text.find("### Run 0") == std::string::npos);
  BOOST_TEST(text.find("Per-run tables for 0 of 6 runs") != std::string::npos);
  BOOST_TEST(text.find("\n## Summary\n") != std::string::npos);
  BOOST_TEST(rows_starting_with(text, "5").size() == 1u);  // the runs table still lists every run
  markdown.runs_detail = 2;
  const std::string two = to_markdown(Profile(trace{}, analysis_options{}, context, result), markdown);
  BOOST_TEST(two.find("### Run 1\n") != std::string::npos);
  BOOST_TEST(two.find("### Run 2\n") == std::string::npos);
  BOOST_TEST(two.find("Per-run tables for 2 of 6 runs") != std::string::npos);
  markdown.runs_detail = 100;
  BOOST_TEST(to_markdown(Profile(trace{}, analysis_options{}, context, result), markdown).find("### Run 5\n") != std::string::npos);
  // Up to 5 runs, all of them by default.
  result.runs.resize(5);
  BOOST_TEST(to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), result)).find("### Run 4\n") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
