// How a profiled process may end, through both injected routes: libregionprof_nvtx_inject.so
// (REGIONPROF_NVTX_TRACE, a Chrome trace) and the CLI's libregionprof_inject.so (REGIONPROF_OUTPUT, the
// JSON profile): exit() inside a region, SIGTERM and SIGINT at their default action, SIGKILL, and fork();
// and fork() under the static route (capture_fork).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"

namespace fs = std::filesystem;
using regionprof::test::child_process;

namespace {

constexpr int steps = 200;

/// A fresh, empty folder for one test's files.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("regionprof_stress_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The two routes: the environment that loads each library, and the file it writes.
struct route {
  const char* name;
  std::vector<std::string> environment(const fs::path& output) const {
    if (std::string(name) == "nvtx_inject") {
      return {std::string("NVTX_INJECTION64_PATH=") + NVTX_INJECT_LIBRARY, "REGIONPROF_NVTX_TRACE=" + output.string()};
    }
    return {std::string("NVTX_INJECTION64_PATH=") + CLI_INJECT_LIBRARY, "REGIONPROF_OUTPUT=" + output.string(),
            "REGIONPROF_RUN_MARKER=step", "REGIONPROF_CLAIM="};
  }
};
const route routes[] = {{"nvtx_inject"}, {"cli_inject"}};

/// What a written file says: range counts by name (Chrome trace) or run count (profile), and warnings.
struct written {
  std::map<std::string, int> ranges;  // Chrome trace only
  std::size_t runs = 0;               // profile only
  std::vector<std::string> warning_codes;
  std::string unbalanced_message;
  std::string ended_by_signal;        // profile only
};

written parse_output(const route& r, const fs::path& path) {
  const boost::json::value root = boost::json::parse(read_file(path));
  written out;
  const boost::json::array* warnings = nullptr;
  if (std::string(r.name) == "nvtx_inject") {
    for (const boost::json::value& e : root.at("traceEvents").as_array()) {
      if (e.at("ph").as_string() == "X") ++out.ranges[std::string(e.at("name").as_string())];
    }
    warnings = &root.at("regionprof").at("warnings").as_array();
  } else {
    out.runs = root.at("runs").as_array().size();
    if (const auto* signal = root.at("target").as_object().if_contains("ended_by_signal")) {
      out.ended_by_signal = std::string(signal->as_string());
    }
    warnings = &root.at("warnings").as_array();
  }
  for (const boost::json::value& w : *warnings) {
    out.warning_codes.emplace_back(w.at("code").as_string());
    if (out.warning_codes.back() == "UNBALANCED_RANGES") {
      out.unbalanced_message = std::string(w.at("message").as_string());
    }
  }
  return out;
}

bool has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

/// The checks every ending that writes shares: all `steps` complete steps are there, `outer` (still open)
/// is not, and UNBALANCED_RANGES names it.
void check_partial(const route& r, const written& w) {
  if (std::string(r.name) == "nvtx_inject") {
    BOOST_TEST(w.ranges.at("step") == steps);
    BOOST_TEST(w.ranges.at("layer") == steps);
    BOOST_TEST(w.ranges.count("outer") == 0u);
    BOOST_TEST(w.ranges.at("worker_op") >= 1000);
  } else {
    BOOST_TEST(w.runs == std::size_t{steps});
  }
  BOOST_TEST(has(w.warning_codes, "UNBALANCED_RANGES"));
  BOOST_TEST(w.unbalanced_message.find("'outer'") != std::string::npos, w.unbalanced_message);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_processes)

// exit(3) inside `outer` while a worker thread still records: the exit handler writes the report, which
// holds every closed range and says UNBALANCED_RANGES for `outer`; the exit status stays 3.
BOOST_AUTO_TEST_CASE(exit_inside_a_region_still_writes_the_report) {
  for (const route& r : routes) {
    BOOST_TEST_CONTEXT(r.name) {
      const fs::path dir = scratch(std::string("exit_") + r.name);
      const fs::path output = dir / "out.json";
      child_process app({STRESS_APP, "exit", std::to_string(steps)}, {.env = r.environment(output)});
      const int status = app.wait().wait_status;
      BOOST_TEST(WIFEXITED(status));
      BOOST_TEST(WEXITSTATUS(status) == 3);
      BOOST_REQUIRE(fs::exists(output));
      check_partial(r, parse_output(r, output));
      BOOST_TEST(files_in(dir) == std::vector<std::string>{"out.json"});
      fs::remove_all(dir);
    }
  }
}

// SIGTERM and SIGINT at their default action: the library writes what was recorded, then the process
// dies of the signal (docs/cli.md, "What a crash leaves").
BOOST_AUTO_TEST_CASE(sigterm_and_sigint_write_what_was_recorded) {
  for (const route& r : routes) {
    // Both injected libraries write from a thread of their own, never in the handler
    // (src/regionprof/inject/signal_writer.hpp), so ThreadSanitizer runs this for both.
    for (const int signal_number : {SIGTERM, SIGINT}) {
      BOOST_TEST_CONTEXT(r.name << " signal " << signal_number) {
        const fs::path dir = scratch(std::string("signal_") + r.name + std::to_string(signal_number));
        const fs::path output = dir / "out.json";
        child_process app({STRESS_APP, "signal", std::to_string(steps)}, {.env = r.environment(output)});
        BOOST_REQUIRE(app.read_line() == "ready");
        app.signal(signal_number);
        const int status = app.wait().wait_status;
        BOOST_TEST(WIFSIGNALED(status));
        BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == signal_number));
        BOOST_REQUIRE(fs::exists(output));
        const written w = parse_output(r, output);
        check_partial(r, w);
        if (std::string(r.name) == "cli_inject") {
          BOOST_TEST(w.ended_by_signal == (signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
        }
        BOOST_TEST(files_in(dir) == std::vector<std::string>{"out.json"});
        fs::remove_all(dir);
      fs::remove_all(dir);
      }
    }
  }
}

// SIGKILL leaves nothing: an earlier report at the output path is left exactly as it was, and no partial
// file appears beside it.
BOOST_AUTO_TEST_CASE(sigkill_leaves_an_earlier_report_untouched_and_no_partial_file) {
  for (const route& r : routes) {
    BOOST_TEST_CONTEXT(r.name) {
      const fs::path dir = scratch(std::string("kill_") + r.name);
      const fs::path output = dir / "out.json";
      std::ofstream(output) << "{\"earlier\": true}\n";
      child_process app({STRESS_APP, "signal", std::to_string(steps)}, {.env = r.environment(output)});
      BOOST_REQUIRE(app.read_line() == "ready");
      app.signal(SIGKILL);
      const int status = app.wait().wait_status;
      BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
      BOOST_TEST(read_file(output) == "{\"earlier\": true}\n");
      BOOST_TEST(files_in(dir) == std::vector<std::string>{"out.json"});
      fs::remove_all(dir);
    }
  }
}

// fork() while a worker records: 4 children record their own ranges (one thread each) and exit(0) with
// the session they inherited; none of them writes (the file does not exist until the parent exits), and
// the parent's report holds exactly its own ranges and none of the children's.
BOOST_AUTO_TEST_CASE(forked_children_neither_write_nor_disturb_the_parent_report) {
  for (const route& r : routes) {
    BOOST_TEST_CONTEXT(r.name) {
      const fs::path dir = scratch(std::string("fork_") + r.name);
      const fs::path output = dir / "out.json";
      child_process app({STRESS_APP, "fork", std::to_string(steps)}, {.env = r.environment(output)});
      const std::string line = app.read_line();
      const int status = app.wait().wait_status;
      BOOST_TEST(line == "children_failed=0 trace_exists=0");
      BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0));
      BOOST_REQUIRE(fs::exists(output));
      const written w = parse_output(r, output);
      BOOST_TEST(!has(w.warning_codes, "UNBALANCED_RANGES"));
      if (std::string(r.name) == "nvtx_inject") {
        BOOST_TEST(w.ranges.at("step") == 2 * steps);
        BOOST_TEST(w.ranges.at("outer") == 1);
        for (const auto& [name, count] : w.ranges) BOOST_TEST(name.rfind("child_step", 0) != 0u, name);
      } else {
        BOOST_TEST(w.runs == std::size_t{2 * steps});
      }
      BOOST_TEST(files_in(dir) == std::vector<std::string>{"out.json"});
      fs::remove_all(dir);
    }
  }
}

// The static route: fork() while threads hold the tool's locks all the time. Every child records and
// stops its own copy of the session (no lock left held by a thread it lacks); the parent's capture is
// exact and holds nothing of the children's.
BOOST_AUTO_TEST_CASE(fork_while_threads_record_under_the_static_route) {
  const auto result = regionprof::test::run_child({CAPTURE_FORK}, {.stderr_to_stdout = true});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(result.out.find("children_ok=16 ") == 0u, result.out);
  BOOST_TEST(result.out.find("child_ranges_in_parent=0") != std::string::npos, result.out);
}

BOOST_AUTO_TEST_SUITE_END()
