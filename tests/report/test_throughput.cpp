// Rule 18 (docs/design.md): declared work and throughput in the JSON report, the Markdown report, the
// HTML page and the terminal table, on tests/support's declared_work_trace (its comment gives every
// interval). Expectations by hand: throughput = work / (own time in ns / 1e9).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/model/profile.hpp"
#include "support/report_fixtures.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

json::object report_of(bool device) {
  const Profile profile(test::declared_work_trace(device), analysis_options{}, fixed_context());
  return parse(to_json(profile)).as_object();
}

/// runs[run].regions entry of `id`.
const json::object& run_region(const json::object& report, std::size_t run, const std::string& id) {
  for (const json::value& entry : report.at("runs").as_array().at(run).at("regions").as_array()) {
    if (str(entry.at("region_id")) == id) return entry.as_object();
  }
  throw std::runtime_error("no region " + id + " in run " + std::to_string(run));
}

const json::object& summary_of(const json::object& report, const std::string& id) {
  for (const json::value& entry : report.at("region_summary").as_array()) {
    if (str(entry.at("region_id")) == id) return entry.as_object();
  }
  throw std::runtime_error("no summary of " + id);
}

using names = std::vector<std::string>;

/// fixed_context() with GPUs of these peak memory bandwidths (bytes per second; nullopt: unknown).
report_context context_with_peaks(const std::vector<std::optional<std::uint64_t>>& peaks) {
  report_context context = fixed_context();
  machine_environment env;
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    env.gpus.push_back({static_cast<std::uint32_t>(i), "Fake GPU", std::nullopt, std::nullopt, peaks[i]});
  }
  context.environment = std::move(env);
  return context;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(throughput)

BOOST_AUTO_TEST_CASE(throughput_is_declared_work_over_own_time_per_domain) {
  const json::object report = report_of(true);
  // Run 0, copy: bytes 1000 + 500 and flops 4000 over CPU 200 + 100 ns and device 250 ns.
  const json::object& copy = run_region(report, 0, "aot_module:copy");
  BOOST_TEST(keys(copy) == (names{"region_id", "calls", "cpu_time_us", "cpu_time_fraction", "device_time_us",
                                   "device_time_fraction", "work", "throughput"}),
             boost::test_tools::per_element());
  BOOST_TEST(keys(copy.at("work").as_object()) == (names{"bytes", "flops"}), boost::test_tools::per_element());
  BOOST_TEST(copy.at("work").at("bytes").to_number<std::uint64_t>() == 1500u);
  BOOST_TEST(copy.at("work").at("flops").to_number<std::uint64_t>() == 4000u);
  const json::object& rate = copy.at("throughput").as_object();
  BOOST_TEST(keys(rate) == (names{"cpu_bytes_per_second", "device_bytes_per_second", "cpu_flops_per_second",
                                   "device_flops_per_second"}),
             boost::test_tools::per_element());
  BOOST_TEST(num(rate.at("cpu_bytes_per_second")) == 5e9);     // 1500 B / 300 ns
  BOOST_TEST(num(rate.at("device_bytes_per_second")) == 6e9);  // 1500 B / 250 ns
  BOOST_TEST(num(rate.at("cpu_flops_per_second")) == 4000.0 * 1e9 / 300.0);  // 1.3333e10
  BOOST_TEST(num(rate.at("device_flops_per_second")) == 1.6e10);            // 4000 / 250 ns
  // Run 1: 1500 B over CPU 600 ns and device 500 ns.
  const json::object& run1 = run_region(report, 1, "aot_module:copy").at("throughput").as_object();
  BOOST_TEST(num(run1.at("cpu_bytes_per_second")) == 2.5e9);
  BOOST_TEST(num(run1.at("device_bytes_per_second")) == 3e9);
}

BOOST_AUTO_TEST_CASE(a_figure_is_absent_where_its_time_is_zero) {
  const json::object report = report_of(true);
  // Run 2: copy launched nothing (device time 0): CPU figures only, 1000 B / 100 ns.
  const json::object& run2 = run_region(report, 2, "aot_module:copy").at("throughput").as_object();
  BOOST_TEST(keys(run2) == (names{"cpu_bytes_per_second"}), boost::test_tools::per_element());
  BOOST_TEST(num(run2.at("cpu_bytes_per_second")) == 1e10);
  // idle: a zero-length instance with items 7 keeps its work and has no figure at all.
  const json::object& idle = run_region(report, 0, "aot_module:idle");
  BOOST_TEST(idle.at("work").at("items").to_number<std::uint64_t>() == 7u);
  BOOST_TEST(idle.at("throughput").as_object().empty());
  BOOST_TEST(!summary_of(report, "aot_module:idle").contains("throughput"));
  // CPU only: no device figure anywhere.
  const json::object cpu = report_of(false);
  BOOST_TEST(keys(run_region(cpu, 0, "aot_module:copy").at("throughput").as_object()) ==
                 (names{"cpu_bytes_per_second", "cpu_flops_per_second"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(region_summary_has_the_median_over_the_runs_that_have_each_figure) {
  const json::object report = report_of(true);
  const json::object& summary = summary_of(report, "aot_module:copy");
  BOOST_TEST(keys(summary).back() == "throughput");
  const json::object& median = summary.at("throughput").as_object();
  BOOST_TEST(num(median.at("cpu_bytes_per_second")) == 5e9);       // median of 5e9, 2.5e9, 1e10
  BOOST_TEST(num(median.at("device_bytes_per_second")) == 4.5e9);  // of 6e9 and 3e9 (run 2 has none)
  BOOST_TEST(num(median.at("cpu_flops_per_second")) == 4000.0 * 1e9 / 300.0);  // run 0 only
  BOOST_TEST(num(median.at("device_flops_per_second")) == 1.6e10);
  BOOST_TEST(!median.contains("cpu_items_per_second"));
}

BOOST_AUTO_TEST_CASE(views_show_throughput_columns_only_with_declared_work) {
  const Profile profile(test::declared_work_trace(true), analysis_options{}, fixed_context());
  const std::string markdown = to_markdown(profile);
  for (const char* heading : {"median CPU bytes/s", "median device bytes/s", "median CPU FLOP/s", "median device FLOP/s"}) {
    BOOST_TEST(markdown.find(heading) != std::string::npos, heading);
  }
  BOOST_TEST(markdown.find("items/s") == std::string::npos);  // idle's items have no time
  BOOST_TEST(markdown.find("5.000 G") != std::string::npos);    // CPU bytes/s, summary and run 0
  BOOST_TEST(markdown.find("4.500 G") != std::string::npos);    // device bytes/s median
  BOOST_TEST(markdown.find("13.333 G") != std::string::npos);   // CPU FLOP/s
  BOOST_TEST(markdown.find("6.000 G") != std::string::npos);    // run 0's device bytes/s
  const std::string terminal = to_terminal_table(profile, false);
  BOOST_TEST(terminal.find("CPU bytes/s") != std::string::npos);
  BOOST_TEST(terminal.find("16.000 G") != std::string::npos);  // device FLOP/s median
  const std::string html = to_html(profile);
  BOOST_TEST(html.find("median CPU bytes/s") != std::string::npos);
  BOOST_TEST(html.find("5.000e+09") != std::string::npos);

  const Profile plain(test::trace_builder().thread(1).marker(0, 100).range("aot_module:a", 10, 20).build(),
                      analysis_options{}, fixed_context());
  for (const std::string& view : {to_markdown(plain), to_terminal_table(plain, false), to_html(plain)}) {
    BOOST_TEST(view.find("bytes/s") == std::string::npos);
    BOOST_TEST(view.find("FLOP/s") == std::string::npos);
    BOOST_TEST(view.find("items/s") == std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(device_bytes_peak_fraction_is_device_bytes_per_second_over_the_shared_peak) {
  // An H200's peak from NVML: 2 x 2619 MHz x 10^6 x 5120 bits / 8 = 3.35232e12 B/s.
  const std::uint64_t h200 = 3352320000000u;
  const Profile profile(test::declared_work_trace(true), analysis_options{}, context_with_peaks({h200, h200}));
  const json::object report = parse(to_json(profile)).as_object();
  const json::object& run0 = run_region(report, 0, "aot_module:copy").at("throughput").as_object();
  BOOST_TEST(keys(run0).back() == "device_bytes_peak_fraction");
  BOOST_TEST(num(run0.at("device_bytes_peak_fraction")) == 6e9 / 3.35232e12);  // 1500 B / 250 ns over the peak
  const json::object& run1 = run_region(report, 1, "aot_module:copy").at("throughput").as_object();
  BOOST_TEST(num(run1.at("device_bytes_peak_fraction")) == 3e9 / 3.35232e12);
  // Run 2 has no device time, so no device bytes per second and no fraction.
  BOOST_TEST(!run_region(report, 2, "aot_module:copy").at("throughput").as_object().contains("device_bytes_peak_fraction"));
  const json::object& median = summary_of(report, "aot_module:copy").at("throughput").as_object();
  BOOST_TEST(num(median.at("device_bytes_peak_fraction")) == (6e9 / 3.35232e12 + 3e9 / 3.35232e12) / 2);
  // The environment records the peak per GPU.
  const json::array& gpus = report.at("environment").at("gpus").as_array();
  BOOST_TEST(gpus.at(1).at("peak_memory_bandwidth_bytes_per_second").to_number<std::uint64_t>() == h200);
}

BOOST_AUTO_TEST_CASE(device_bytes_peak_fraction_is_absent_without_one_shared_peak) {
  const auto fraction_anywhere = [](const report_context& context, bool device) {
    const Profile profile(test::declared_work_trace(device), analysis_options{}, context);
    return to_json(profile).find("device_bytes_peak_fraction") != std::string::npos ||
           to_markdown(profile).find("peak BW") != std::string::npos ||
           to_terminal_table(profile, false).find("peak BW") != std::string::npos ||
           to_html(profile).find("peak BW") != std::string::npos;
  };
  BOOST_TEST(fraction_anywhere(context_with_peaks({12000000000u}), true));  // the control: one GPU, one peak
  BOOST_TEST(!fraction_anywhere(fixed_context(), true));                    // no environment
  BOOST_TEST(!fraction_anywhere(context_with_peaks({}), true));             // no GPU
  BOOST_TEST(!fraction_anywhere(context_with_peaks({std::nullopt}), true));  // NVML could not say
  BOOST_TEST(!fraction_anywhere(context_with_peaks({12000000000u, 3352320000000u}), true));  // two peaks
  BOOST_TEST(!fraction_anywhere(context_with_peaks({12000000000u, std::nullopt}), true));
  BOOST_TEST(!fraction_anywhere(context_with_peaks({12000000000u}), false));  // CPU only: no device bytes/s
}

BOOST_AUTO_TEST_CASE(views_show_the_share_of_peak_bandwidth) {
  // A peak of 1.2e10 B/s: run 0's 6e9 B/s is 50 %, run 1's 3e9 25 %, their median 37.5 %.
  const Profile profile(test::declared_work_trace(true), analysis_options{}, context_with_peaks({12000000000u}));
  const std::string markdown = to_markdown(profile);
  BOOST_TEST(markdown.find("median % of peak BW") != std::string::npos);
  BOOST_TEST(markdown.find("37.50 %") != std::string::npos);  // the summary's median
  BOOST_TEST(markdown.find("50.00 %") != std::string::npos);  // run 0's table
  BOOST_TEST(markdown.find("25.00 %") != std::string::npos);  // run 1's table
  const std::string terminal = to_terminal_table(profile, false);
  BOOST_TEST(terminal.find("% of peak BW") != std::string::npos);
  BOOST_TEST(terminal.find("37.50 %") != std::string::npos);
  const std::string html = to_html(profile);
  BOOST_TEST(html.find("median % of peak BW") != std::string::npos);
  BOOST_TEST(html.find("37.50 %") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
