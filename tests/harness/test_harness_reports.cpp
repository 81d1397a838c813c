// The harness's reports: the JSON of a CPU-only profile, the Chrome trace file, the example's report
// (build/bin/cpu_pipeline), and the harness under another NVTX tool (child processes).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.hpp"
#include "support/child_process.hpp"

using namespace regionprof;
using regionprof::testing::has_warning;
using regionprof::testing::quick;
using regionprof::test::run_child;

namespace {

boost::json::object read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << path);
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str()).as_object();
}

double number(const boost::json::value& v) { return boost::json::value_to<double>(v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(harness_reports)

// No GPU here: CPU data, no device field anywhere, and the reason in DEVICE_TRACING_UNAVAILABLE.
BOOST_AUTO_TEST_CASE(cpu_only_profile_has_no_device_fields) {
  static const registered_region work{region_kind::aot_module, "work"};
  const Profile profile = regionprof::profile(
      [] {
        const scoped_region region{work};
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      },
      quick(1, 3));
  const boost::json::object report = boost::json::parse(to_json(profile)).as_object();
  BOOST_TEST(report.at("config").at("warmup_runs").as_int64() == 1);
  BOOST_TEST(report.at("config").at("measured_runs").as_int64() == 3);
  BOOST_TEST(report.at("config").at("uses_inference_function").as_bool());
  BOOST_REQUIRE_EQUAL(report.at("runs").as_array().size(), 3u);
  for (const boost::json::value& run : report.at("runs").as_array()) {
    const boost::json::object& timing = run.at("timing").as_object();
    BOOST_TEST(timing.contains("cpu_time_us"));
    for (const char* key : {"device_time_us", "device_busy_us", "device_span_us", "devices"}) BOOST_TEST(!timing.contains(key));
    for (const boost::json::value& region : run.at("regions").as_array()) {
      BOOST_TEST(!region.as_object().contains("device_time_us"));
      BOOST_TEST(!region.as_object().contains("device_time_fraction"));
    }
    BOOST_TEST(!run.at("residual").as_object().contains("device_time_us"));
  }
  const boost::json::array& activities = report.at("profiler").at("activities").as_array();
  BOOST_TEST(activities.size() == 1u);
  BOOST_TEST(activities[0].as_string() == "CPU");
  BOOST_TEST(!report.at("profiler").at("key_averages").as_object().contains("device_time_total"));
  bool unavailable = false;
  for (const boost::json::value& w : report.at("warnings").as_array()) {
    unavailable = unavailable || w.at("code").as_string() == "DEVICE_TRACING_UNAVAILABLE";
  }
  BOOST_TEST(unavailable);
}

BOOST_AUTO_TEST_CASE(trace_file_is_written) {
  const auto path = std::filesystem::temp_directory_path() / ("regionprof_harness_trace_" + std::to_string(::getpid()) + ".json");
  profile_options options = quick(0, 2);
  options.trace_file = path.string();
  const Profile profile = regionprof::profile([] {}, options);
  std::ifstream in(path);
  BOOST_REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::object trace = boost::json::parse(text.str()).as_object();
  std::size_t markers = 0;
  for (const boost::json::value& e : trace.at("traceEvents").as_array()) {
    if (e.as_object().contains("name") && e.at("name").as_string() == run_marker_name) ++markers;
  }
  BOOST_TEST(markers == 3u);  // the internal warm-up run is in the trace too
  std::filesystem::remove(path);
}


// Per run: region CPU fractions + residual fraction = 1; the regions are the topmost ones (normalize is
// nested in transform); the worker thread's region shows up off-thread; the glue is the residual.
BOOST_AUTO_TEST_CASE(cpu_pipeline_fractions_and_residual_sum_to_one) {
  const auto dir = std::filesystem::temp_directory_path() / ("regionprof_example_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto json = dir / "profile.json";
  const auto trace = dir / "trace.json";
  const auto result = run_child({CPU_PIPELINE, "--records", "5000", "-o", json.string(), "--trace", trace.string()});
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  BOOST_TEST(result.out.find("untuned_module:transform") != std::string::npos, "the Markdown is printed");
  const boost::json::object report = read_json(json);
  const boost::json::array& runs = report.at("runs").as_array();
  BOOST_REQUIRE_EQUAL(runs.size(), 10u);
  for (const boost::json::value& run_value : runs) {
    const boost::json::object& run = run_value.as_object();
    std::map<std::string, const boost::json::object*> regions;
    double fractions = 0;
    double region_us = 0;
    for (const boost::json::value& r : run.at("regions").as_array()) {
      const boost::json::object& region = r.as_object();
      regions[std::string(region.at("region_id").as_string())] = &region;
      if (region.contains("cpu_time_fraction")) fractions += number(region.at("cpu_time_fraction"));
      region_us += number(region.at("cpu_time_us"));
    }
    const boost::json::object& residual = run.at("residual").as_object();
    BOOST_TEST(std::abs(fractions + number(residual.at("cpu_time_fraction")) - 1.0) < 1e-9);
    BOOST_TEST(std::abs(region_us + number(residual.at("cpu_time_us")) - number(run.at("timing").at("cpu_time_us"))) <
               0.01);
    BOOST_TEST(number(residual.at("cpu_time_us")) > 0, "the glue outside any region is residual");
    for (const char* id : {"aot_module:parser", "untuned_module:transform", "untuned_module:reduce"}) {
      BOOST_REQUIRE_MESSAGE(regions.count(id) == 1, id << " in every run");
      BOOST_TEST(regions[id]->at("calls").as_int64() == 1, id);
    }
    BOOST_TEST(regions.count("aot_module:normalize") == 0u, "nested in transform: owned by it");
    BOOST_REQUIRE(regions.count("untuned_module:reduce.worker") == 1u);
    const boost::json::object& worker = *regions["untuned_module:reduce.worker"];
    BOOST_TEST(worker.at("calls").as_int64() == 0, "off the run's thread: no calls");
    BOOST_TEST(number(worker.at("off_thread_cpu_time_us")) > 0);
  }
  BOOST_TEST(std::filesystem::file_size(trace) > 0u);
  std::filesystem::remove_all(dir);
}

// Another tool owns NVTX: no range is captured, yet every measured run is reported from the wall clock,
// all of it residual, with NVTX_TOOL_CONFLICT saying why.
BOOST_AUTO_TEST_CASE(another_nvtx_tool_leaves_wall_clock_runs) {
  const auto result = run_child({HARNESS_CHILD}, {.env = {std::string("NVTX_INJECTION64_PATH=") + OTHER_NVTX_TOOL}});
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const boost::json::object report = boost::json::parse(result.out).as_object();
  const boost::json::array& runs = report.at("runs").as_array();
  BOOST_REQUIRE_EQUAL(runs.size(), 4u);
  for (const boost::json::value& run : runs) {
    BOOST_TEST(number(run.at("timing").at("wall_time_us")) >= 2000.0);
    BOOST_TEST(run.at("regions").as_array().empty());
    BOOST_TEST(number(run.at("residual").at("cpu_time_fraction")) == 1.0);
  }
  bool conflict = false;
  for (const boost::json::value& w : report.at("warnings").as_array()) {
    if (w.at("code").as_string() == "NVTX_TOOL_CONFLICT") {
      conflict = true;
      BOOST_TEST(w.at("source").as_string() == "nvtx");
      BOOST_TEST(std::string(w.at("message").as_string()).find(OTHER_NVTX_TOOL) != std::string::npos);
    }
  }
  BOOST_TEST(conflict);
}

// Windows without the capture: each window's runs come from the wall clock, numbered on, and each
// window says why (NVTX_TOOL_CONFLICT).
BOOST_AUTO_TEST_CASE(another_nvtx_tool_leaves_wall_clock_windows) {
  const auto dir = std::filesystem::temp_directory_path() / ("regionprof_harness_windows_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto result = run_child({HARNESS_CHILD, (dir / "w-%w.json").string()},
                                {.env = {std::string("NVTX_INJECTION64_PATH=") + OTHER_NVTX_TOOL}});
  BOOST_REQUIRE_MESSAGE(result.exit_code == 0, result.err);
  const std::size_t sizes[] = {3, 1};
  for (std::size_t w = 0; w < 2; ++w) {
    std::ifstream file(dir / ("w-" + std::to_string(w) + ".json"));
    std::stringstream text;
    text << file.rdbuf();
    BOOST_REQUIRE_MESSAGE(!text.str().empty(), "window " << w);
    const boost::json::object report = boost::json::parse(text.str()).as_object();
    BOOST_TEST(report.at("target").at("window").to_number<std::size_t>() == w);
    const boost::json::array& runs = report.at("runs").as_array();
    BOOST_REQUIRE_EQUAL(runs.size(), sizes[w]);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      BOOST_TEST(runs[i].at("run_index").to_number<std::size_t>() == w * 3 + i);
      BOOST_TEST(number(runs[i].at("timing").at("wall_time_us")) >= 2000.0);
    }
    bool conflict = false;
    for (const boost::json::value& warning : report.at("warnings").as_array()) {
      conflict = conflict || warning.at("code").as_string() == "NVTX_TOOL_CONFLICT";
    }
    BOOST_TEST(conflict, "window " << w);
  }
  BOOST_TEST(!std::filesystem::exists(dir / "w-2.json"));
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
