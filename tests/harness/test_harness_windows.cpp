// regionprof::profile with windows (profile_options::window_runs): one profile written every N measured
// runs, run indices numbered on, the last window returned; and what is refused.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.h"

using namespace regionprof;
using regionprof::testing::quick;

namespace {

namespace fs = std::filesystem;

struct scratch {
  fs::path dir = fs::temp_directory_path() / ("regionprof-harness-windows-" + std::to_string(::getpid()));
  scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() { fs::remove_all(dir); }
};

boost::json::object read_json(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return boost::json::parse(text.str()).as_object();
}

std::string invalid_argument_of(const profile_options& options) {
  int calls = 0;
  try {
    regionprof::profile([&] { ++calls; }, options);
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(calls == 0);  // refused before any run
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(harness_windows)

// 2 warm-ups, the internal warm-up, 25 measured runs in windows of 10: w-0 (runs 0-9), w-1 (10-19),
// w-2 (20-24, returned). Call c opens region aot_module:call_c, so run r is call r + 4 (calls 1-2 the
// warm-ups, 3 the internal one) in whichever window it lands.
BOOST_AUTO_TEST_CASE(twenty_five_runs_in_windows_of_ten_write_three_profiles) {
  const scratch tmp;
  int calls = 0;
  profile_options options = quick(2, 25);
  options.window_runs = 10;
  options.window_output = (tmp.dir / "w-%w.json").string();
  const Profile last = regionprof::profile(
      [&] {
        ++calls;
        regionprof_region_push_name("aot_module", ("call_" + std::to_string(calls)).c_str());
        regionprof_region_pop();
      },
      options);
  BOOST_TEST(calls == 2 + 1 + 25);
  const std::size_t sizes[] = {10, 10, 5};
  std::vector<bool> device_unavailable;  // each window's own device session says so for itself
  for (std::size_t w = 0; w < 3; ++w) {
    const fs::path path = tmp.dir / ("w-" + std::to_string(w) + ".json");
    BOOST_REQUIRE_MESSAGE(fs::exists(path), path);
    const boost::json::object report = read_json(path);
    const boost::json::object& target = report.at("target").as_object();
    BOOST_TEST(target.at("window").to_number<std::size_t>() == w);
    BOOST_TEST(target.at("window_runs").to_number<std::size_t>() == 10u);
    BOOST_TEST(target.at("pid").to_number<pid_t>() == ::getpid());
    const boost::json::object& config = report.at("config").as_object();
    BOOST_TEST(config.at("warmup_runs").to_number<std::size_t>() == (w == 0 ? 2u : 0u));
    BOOST_TEST(config.at("measured_runs").to_number<std::size_t>() == sizes[w]);
    bool unavailable = false;
    for (const boost::json::value& warning : report.at("warnings").as_array()) {
      unavailable = unavailable || warning.at("code").as_string() == "DEVICE_TRACING_UNAVAILABLE";
    }
    device_unavailable.push_back(unavailable);
    const boost::json::array& runs = report.at("runs").as_array();
    BOOST_REQUIRE_EQUAL(runs.size(), sizes[w]);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const boost::json::object& run = runs[i].as_object();
      const std::size_t index = w * 10 + i;
      BOOST_TEST(run.at("run_index").to_number<std::size_t>() == index);
      const boost::json::array& regions = run.at("regions").as_array();
      BOOST_REQUIRE_EQUAL(regions.size(), 1u);
      BOOST_TEST(regions[0].at("region_id").as_string() == "aot_module:call_" + std::to_string(index + 4));
    }
  }
  BOOST_TEST(!fs::exists(tmp.dir / "w-3.json"));
  BOOST_TEST(device_unavailable[1] == device_unavailable[0]);
  BOOST_TEST(device_unavailable[2] == device_unavailable[0]);
  // The call returns the last window, as written.
  BOOST_REQUIRE_EQUAL(last.result().runs.size(), 5u);
  BOOST_TEST(last.result().runs.front().run_index == 20u);
  BOOST_TEST(last.result().runs.back().run_index == 24u);
  BOOST_TEST(to_json(last) == [&] {
    std::ifstream file(tmp.dir / "w-2.json");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }());
}

// 20 runs in windows of 10: two full windows, no third (empty) one; 5 runs: one partial window 0.
BOOST_AUTO_TEST_CASE(a_last_full_window_is_the_last_and_fewer_runs_make_window_0) {
  const scratch tmp;
  profile_options options = quick(0, 20);
  options.window_runs = 10;
  options.window_output = (tmp.dir / "a-%w.json").string();
  const Profile last = regionprof::profile([] {}, options);
  BOOST_TEST(fs::exists(tmp.dir / "a-1.json"));
  BOOST_TEST(!fs::exists(tmp.dir / "a-2.json"));
  BOOST_REQUIRE_EQUAL(last.result().runs.size(), 10u);
  BOOST_TEST(last.result().runs.front().run_index == 10u);
  options.measured_runs = 5;
  options.window_output = (tmp.dir / "b-%w.json").string();
  const Profile only = regionprof::profile([] {}, options);
  BOOST_TEST(fs::exists(tmp.dir / "b-0.json"));
  BOOST_TEST(!fs::exists(tmp.dir / "b-1.json"));
  BOOST_TEST(only.result().runs.size() == 5u);
  const boost::json::object target = boost::json::parse(to_json(only)).at("target").as_object();
  BOOST_TEST(target.at("window").to_number<int>() == 0);
}

// With windows the trace file is one per window too (%w).
BOOST_AUTO_TEST_CASE(every_window_writes_its_trace_file) {
  const scratch tmp;
  profile_options options = quick(0, 3);
  options.window_runs = 2;
  options.window_output = (tmp.dir / "p-%w.json").string();
  options.trace_file = (tmp.dir / "t-%w.json").string();
  regionprof::profile([] {}, options);
  BOOST_TEST(fs::exists(tmp.dir / "t-0.json"));
  BOOST_TEST(fs::exists(tmp.dir / "t-1.json"));
  BOOST_TEST(!fs::exists(tmp.dir / "t-2.json"));
}

// The caller's target kind and warnings are in every window's report (Python's torch adapter sets them).
BOOST_AUTO_TEST_CASE(the_target_kind_and_the_callers_warnings_are_in_every_window) {
  const scratch tmp;
  profile_options options = quick(0, 3);
  options.window_runs = 2;
  options.window_output = (tmp.dir / "k-%w.json").string();
  options.target_kind = "torch_module";
  options.warnings = {{warning_code::compiled_modules, warning_source::nvtx, "2 module(s) run inside compiled code"}};
  regionprof::profile([] {}, options);
  for (const char* name : {"k-0.json", "k-1.json"}) {
    const boost::json::object report = read_json(tmp.dir / name);
    BOOST_TEST(report.at("target").at("kind").as_string() == "torch_module");
    bool found = false;
    for (const boost::json::value& w : report.at("warnings").as_array()) {
      found = found || (w.at("code").as_string() == "COMPILED_MODULES" &&
                        w.at("message").as_string() == "2 module(s) run inside compiled code");
    }
    BOOST_TEST(found, name);
  }
  options.target_kind = "Torch Module";
  BOOST_CHECK_THROW(regionprof::profile([] {}, options), std::invalid_argument);
}

// Warnings known once the workload ran (Python's compiled-kernel findings) are asked for as each window
// is finished, so each report holds what was known at its end, after the caller's other warnings.
BOOST_AUTO_TEST_CASE(warnings_at_finish_are_asked_for_by_each_window) {
  const scratch tmp;
  profile_options options = quick(0, 3);
  options.window_runs = 2;
  options.window_output = (tmp.dir / "f-%w.json").string();
  options.warnings = {{warning_code::compiled_modules, warning_source::nvtx, "known before"}};
  int calls_run = 0;
  int asked = 0;
  options.warnings_at_finish = [&] {
    ++asked;
    return std::vector<warning>{
        {warning_code::compiled_modules, warning_source::nvtx, std::to_string(calls_run) + " calls run"}};
  };
  regionprof::profile([&] { ++calls_run; }, options);
  BOOST_TEST(asked == 2);
  // Window 0 ends after the recorded warm-up and 2 measured calls, window 1 (the last, partial) after 4.
  for (const auto& [name, expected] : {std::pair{"f-0.json", "3 calls run"}, std::pair{"f-1.json", "4 calls run"}}) {
    const boost::json::object report = read_json(tmp.dir / name);
    std::vector<std::string> messages;
    for (const boost::json::value& w : report.at("warnings").as_array()) {
      if (w.at("code").as_string() == "COMPILED_MODULES") messages.emplace_back(w.at("message").as_string());
    }
    BOOST_TEST(messages == (std::vector<std::string>{"known before", expected}), name);
  }
}

BOOST_AUTO_TEST_CASE(windows_refuse_what_cannot_be_before_any_run) {
  profile_options options = quick(0, 5);
  options.window_runs = 0;
  options.window_output = "w-%w.json";
  BOOST_TEST(invalid_argument_of(options) ==
             "regionprof::profile: window_runs must be at least 1 (the runs of each window); leave it unset for "
             "one profile of every run");
  options.window_runs = 2;
  options.stopping.max_noise = 0.05;
  BOOST_TEST(invalid_argument_of(options) ==
             "regionprof::profile: window_runs cannot be combined with stopping on noise (max_noise): a window "
             "is a fixed count of runs; unset one of them (measured_runs sets the total with windows)");
  options.stopping.max_noise.reset();
  options.window_output = "w.json";
  BOOST_TEST(invalid_argument_of(options) ==
             "regionprof::profile: window_output: output path 'w.json': with windows a profile is written per "
             "window, and every window would write this one file; add %w (the window index) to the "
             "path, e.g. 'prof-%w.json'");
  options.window_output.reset();
  BOOST_TEST(invalid_argument_of(options) ==
             "regionprof::profile: window_runs needs window_output, the path each window's profile is written "
             "to, with %w (the window index), e.g. 'w/prof-%w.json'");
  options.window_output = "w-%w.json";
  options.trace_file = "t.json";
  BOOST_TEST(invalid_argument_of(options).starts_with("regionprof::profile: trace_file: output path 't.json': "
                                                      "with windows a profile is written per window"));
  options.trace_file.reset();
  options.window_runs.reset();
  BOOST_TEST(invalid_argument_of(options) ==
             "regionprof::profile: window_output is only used with window_runs; set window_runs (the runs of each "
             "window) or leave window_output unset");
}

BOOST_AUTO_TEST_SUITE_END()
