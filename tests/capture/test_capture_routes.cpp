// How NVTX finds the tool, in child processes: the injected route into a program built without the static
// tool, another tool owning NVTX (NVTX_TOOL_CONFLICT), and the CLOCK_MONOTONIC fallback.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture_clock.hpp"
#include "support/child_process.hpp"

using regionprof::test::run_child;

namespace {

/// capture_child's stdout and stderr together, run with `env` (NAME=value) added.
std::string child(const std::vector<std::string>& env, int ranges) {
  const auto result = run_child({CAPTURE_CHILD, std::to_string(ranges)}, {.env = env, .stderr_to_stdout = true});
  BOOST_TEST(result.exit_code == 0, result.out);
  return result.out;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::filesystem::path scratch_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("regionprof_capture_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_routes)

BOOST_AUTO_TEST_CASE(static_route_in_a_child_uses_the_tsc_when_invariant) {
  const bool tsc = regionprof::capture_detail::choose_capture_clock();
  const std::string out = child({}, 1000);
  BOOST_TEST(first_line(out) == "intervals=2000 records=4000 tsc=" + std::to_string(tsc ? 1 : 0) +
                                    " attached=1 warnings=");
}

BOOST_AUTO_TEST_CASE(monotonic_clock_fallback_records_the_same) {
  const std::string out = child({"REGIONPROF_CAPTURE_CLOCK=monotonic"}, 1000);
  BOOST_TEST(first_line(out) == "intervals=2000 records=4000 tsc=0 attached=1 warnings=");
}

BOOST_AUTO_TEST_CASE(another_tool_in_nvtx_injection64_path_is_a_conflict) {
  const std::string out = child({std::string("NVTX_INJECTION64_PATH=") + OTHER_NVTX_TOOL}, 100);
  BOOST_TEST(first_line(out) == "intervals=0 records=0 tsc=" +
                                    std::to_string(regionprof::capture_detail::choose_capture_clock() ? 1 : 0) +
                                    " attached=0 warnings=NVTX_TOOL_CONFLICT");
  BOOST_TEST(out.find(std::string("NVTX_TOOL_CONFLICT: NVTX_INJECTION64_PATH=") + OTHER_NVTX_TOOL) != std::string::npos,
             out);
  BOOST_TEST(out.find("Unset NVTX_INJECTION64_PATH") != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(a_missing_injection_library_is_a_conflict) {
  const std::string out = child({"NVTX_INJECTION64_PATH=/nonexistent/libnothing.so"}, 100);
  BOOST_TEST(first_line(out).find("intervals=0 records=0") == 0u, out);
  BOOST_TEST(first_line(out).find("attached=0 warnings=NVTX_TOOL_CONFLICT") != std::string::npos, out);
}

// nvtx_plain_app has no regionprof code at all; libregionprof_nvtx_inject.so records it and writes a
// Chrome trace at exit, leaving the program's output and exit status alone.
BOOST_AUTO_TEST_CASE(injected_route_records_a_program_without_the_static_tool) {
  const auto trace_path = scratch_file("plain_app_trace.json");
  std::filesystem::remove(trace_path);
  const auto result = run_child(
      {NVTX_PLAIN_APP},
      {.env = {std::string("NVTX_INJECTION64_PATH=") + NVTX_INJECT_LIBRARY, "REGIONPROF_NVTX_TRACE=" + trace_path.string()},
       .stderr_to_stdout = true});
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.out == "plain app done\n");
  std::ifstream in(trace_path);
  BOOST_REQUIRE_MESSAGE(in, "no trace written to " << trace_path);
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::value root = boost::json::parse(text.str());
  std::map<std::string, int> counts;
  std::map<std::string, std::vector<std::pair<double, double>>> spans;  // name -> (ts, end) in us
  std::map<std::string, std::int64_t> tid_of;
  for (const boost::json::value& e : root.at("traceEvents").as_array()) {
    const boost::json::object& event = e.as_object();
    if (event.at("ph").as_string() != "X") continue;
    const std::string name(event.at("name").as_string());
    ++counts[name];
    const double ts = boost::json::value_to<double>(event.at("ts"));
    spans[name].push_back({ts, ts + boost::json::value_to<double>(event.at("dur"))});
    tid_of[name] = boost::json::value_to<std::int64_t>(event.at("tid"));
  }
  BOOST_TEST(counts.size() == 7u);
  BOOST_TEST(counts["step"] == 3);
  for (int layer = 0; layer < 4; ++layer) BOOST_TEST(counts["layer_" + std::to_string(layer)] == 3);
  BOOST_TEST(counts["worker_op"] == 1000);
  BOOST_TEST(counts["handoff"] == 1);
  BOOST_TEST(tid_of["handoff"] == tid_of["step"], "a start/end range lives on the thread that started it");
  BOOST_TEST(tid_of["worker_op"] != tid_of["step"]);
  for (int s = 0; s < 3; ++s) {
    const auto [step_start, step_end] = spans["step"][s];
    for (int layer = 0; layer < 4; ++layer) {
      const auto [start, end] = spans["layer_" + std::to_string(layer)][s];
      BOOST_TEST((step_start <= start && end <= step_end), "layer_" << layer << " inside step " << s);
    }
  }
  std::filesystem::remove_all(trace_path.parent_path());
}

BOOST_AUTO_TEST_SUITE_END()
