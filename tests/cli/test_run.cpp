// `regionprof run` from outside, as a user runs it: the CLI starts a program with the injection library,
// passes its output and exit status through, and the profile says what happened. Programs:
// examples/nvtx_app (the command of docs/cli.md) and run_child.c (exit codes, crashes, fork, chdir).
#define BOOST_TEST_MODULE regionprof run
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "cli_runner.hpp"
#include "support/child_process.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct outcome {
  int status = -1;  ///< exit code, or 128 + signal
  std::string out;
  std::string err;
};

std::string read_file(const fs::path& path) { return cli_test::read_file(path.string()); }

/// Runs `regionprof run ARGS...` in `dir`, stdout and stderr captured.
outcome regionprof_run(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {REGIONPROF_CLI, "run"});
  regionprof::test::child_result r = regionprof::test::run_child(args, {.dir = dir});
  outcome result{r.status, std::move(r.out), std::move(r.err)};
  BOOST_TEST_MESSAGE("regionprof run -> " << result.status << "\nstderr: " << result.err);
  return result;
}

json::object load_profile(const fs::path& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), path << " was not written");
  return json::parse(read_file(path)).as_object();
}

std::vector<std::string> warning_codes(const json::object& profile) {
  std::vector<std::string> codes;
  for (const json::value& w : profile.at("warnings").as_array()) codes.emplace_back(w.at("code").as_string());
  return codes;
}

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

double number(const json::value& v) { return v.is_double() ? v.as_double() : static_cast<double>(v.to_number<std::int64_t>()); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(run_command)

// docs/cli.md's command, exactly: 5 runs x 4 layer regions, fractions summing to 1, CPU only.
BOOST_AUTO_TEST_CASE(nvtx_app_is_attributed_from_outside) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "--region", "layer_(.*)=layer", "--", NVTX_APP});
  BOOST_TEST(run.status == 0);
  BOOST_TEST(run.out.rfind("# regionprof report", 0) == 0);  // no -o: the Markdown on stdout
  BOOST_TEST(contains(run.out, "`layer:3`"));
  BOOST_TEST(contains(run.err, "regionprof: wrote profile.json (5 runs, 4 regions"));
  const json::object profile = load_profile(dir.path / "profile.json");
  BOOST_TEST(profile.at("schema_version").to_number<int>() == 1);
  BOOST_TEST(profile.at("target").at("type").as_string() == "process");
  const json::array& runs = profile.at("runs").as_array();
  BOOST_REQUIRE_EQUAL(runs.size(), 5u);
  double layer0 = 0;
  double layer3 = 0;
  for (const json::value& value : runs) {
    const json::object& run_result = value.as_object();
    const json::array& regions = run_result.at("regions").as_array();
    BOOST_REQUIRE_EQUAL(regions.size(), 4u);
    std::vector<std::string> ids;
    double fractions = number(run_result.at("residual").at("cpu_time_fraction"));
    double cpu = number(run_result.at("residual").at("cpu_time_us"));
    for (const json::value& region : regions) {
      ids.emplace_back(region.at("region_id").as_string());
      BOOST_TEST(region.at("calls").to_number<int>() == 1);
      fractions += number(region.at("cpu_time_fraction"));
      cpu += number(region.at("cpu_time_us"));
      BOOST_TEST(!region.as_object().contains("device_time_us"));  // CPU only
      if (ids.back() == "layer:0") layer0 += number(region.at("cpu_time_us"));
      if (ids.back() == "layer:3") layer3 += number(region.at("cpu_time_us"));
    }
    std::sort(ids.begin(), ids.end());
    BOOST_TEST((ids == std::vector<std::string>{"layer:0", "layer:1", "layer:2", "layer:3"}));
    BOOST_TEST(std::abs(fractions - 1.0) < 1e-9, "fractions sum to " << fractions);
    BOOST_TEST(std::abs(cpu - number(run_result.at("timing").at("cpu_time_us"))) < 0.01);
  }
  BOOST_TEST(layer3 > layer0);  // layer_3 does 4x the work of layer_0
  BOOST_TEST(profile.at("regions").as_array().size() == 4u);
  BOOST_TEST(has(warning_codes(profile), "DEVICE_TRACING_UNAVAILABLE"));  // nvtx_app never initialises CUDA
}

// Report `environment`: this machine as the injected library read it when the program started.
BOOST_AUTO_TEST_CASE(the_profile_records_the_machine) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "-o", "p.json", NVTX_APP});
  BOOST_TEST(run.status == 0);
  const json::object profile = load_profile(dir.path / "p.json");
  BOOST_REQUIRE(profile.contains("environment"));
  const json::object& env = profile.at("environment").as_object();
  BOOST_TEST(env.at("cpu_count").to_number<long>() == ::sysconf(_SC_NPROCESSORS_ONLN));
  BOOST_TEST(env.at("load_average").as_array().size() == 3u);
  BOOST_TEST(env.at("memory_total_bytes").to_number<std::uint64_t>() > 0u);
  BOOST_TEST(!profile.contains("stopping"));  // the program decides its runs
  const double load = number(env.at("load_average").as_array()[0]);
  const bool loaded = load > static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
  BOOST_TEST(has(warning_codes(profile), "MACHINE_LOADED") == loaded);
}

// --processes N: N processes, one profile each (%n), a side for `regionprof diff`.
BOOST_AUTO_TEST_CASE(processes_write_one_profile_each) {
  cli_test::scratch_dir dir{"regionprof-run"};
  fs::create_directory(dir.path / "a");
  const outcome run = regionprof_run(dir.path, {"--processes", "3", "--run-marker", "step", "--region",
                                                "layer_(.*)=layer", "-o", "a/prof-%n.json", "--", NVTX_APP});
  BOOST_TEST(run.status == 0);
  BOOST_TEST(run.out.empty());
  std::vector<std::int64_t> pids;
  for (const char* name : {"prof-0.json", "prof-1.json", "prof-2.json"}) {
    const json::object profile = load_profile(dir.path / "a" / name);
    BOOST_TEST(profile.at("runs").as_array().size() == 5u);
    pids.push_back(profile.at("target").at("pid").to_number<std::int64_t>());
    BOOST_TEST(contains(run.err, std::string("regionprof: wrote a/") + name), run.err);
  }
  BOOST_TEST(pids[0] != pids[1]);  // three processes
  BOOST_TEST(pids[1] != pids[2]);
  BOOST_TEST(!fs::exists(dir.path / "a" / "prof-3.json"));
  // The directory is a side: 3 against 3 processes, the per-process test, no ONE_PROCESS_PER_SIDE.
  const regionprof::test::child_result diff =
      regionprof::test::run_child({REGIONPROF_CLI, "diff", "-o", "d.json", "a", "a"}, {.dir = dir.path});
  BOOST_TEST(diff.status == 0, diff.err);
  const json::object d = load_profile(dir.path / "d.json");
  BOOST_TEST(d.at("test").as_string() == "student_t_log_process_medians");
  BOOST_TEST(d.at("a").at("processes").to_number<int>() == 3);
  BOOST_TEST(d.at("warnings").as_array().empty());
  // Without %n every process would write one file: a usage error, nothing runs.
  const outcome one_file = regionprof_run(dir.path, {"--processes", "2", "-o", "p.json", "--", NVTX_APP});
  BOOST_TEST(one_file.status == 2);
  BOOST_TEST(contains(one_file.err, "2 processes would all write this one file; add %n"), one_file.err);
  BOOST_TEST(!fs::exists(dir.path / "p.json"));
  BOOST_TEST(regionprof_run(dir.path, {"--processes", "0", "-o", "p-%n.json", "--", NVTX_APP}).status == 2);
  // A failing process stops the series with its status.
  const outcome failing = regionprof_run(dir.path, {"--processes", "3", "-o", "f-%n.json", "--", RUN_CHILD, "exit", "7"});
  BOOST_TEST(failing.status == 7);
  BOOST_TEST(contains(failing.err, "process 0 of 3 exited with 7"), failing.err);
  BOOST_TEST(!fs::exists(dir.path / "f-1.json"));
}

BOOST_AUTO_TEST_CASE(warmup_runs_are_discarded) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(
      dir.path, {"--run-marker", "step", "--region", "layer_(.*)=layer", "--warmup-runs", "2", "-o", "p.json", NVTX_APP});
  BOOST_TEST(run.status == 0);
  BOOST_TEST(run.out.empty());  // -o given: nothing of ours on stdout
  const json::object profile = load_profile(dir.path / "p.json");
  BOOST_TEST(profile.at("runs").as_array().size() == 3u);
  BOOST_TEST(profile.at("config").at("warmup_runs").to_number<int>() == 2);
}

BOOST_AUTO_TEST_CASE(the_programs_output_and_exit_status_pass_through) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "--region", "work", "-o", "out/p.json",
                                                "--markdown", "p.md", "--trace", "t.json", "--", RUN_CHILD, "exit", "3"});
  BOOST_TEST(run.status == 1);  // out/ does not exist: refused before running anything
  BOOST_TEST(contains(run.err, "directory"));
  BOOST_TEST(run.out.empty());

  const outcome ok = regionprof_run(dir.path, {"--run-marker", "step", "--region", "work", "-o", "p.json",
                                               "--markdown", "p.md", "--trace", "t.json", "--", RUN_CHILD, "exit", "3"});
  BOOST_TEST(ok.status == 3);
  BOOST_TEST(ok.out == "run_child: hello\n");  // exactly the program's own output
  BOOST_TEST(contains(ok.err, "run_child: to stderr\n"));
  BOOST_TEST(contains(ok.err, "regionprof: wrote p.json (2 runs, 1 regions"));
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 2u);
  BOOST_TEST(read_file(dir.path / "p.md").rfind("# regionprof report", 0) == 0);
  BOOST_TEST(json::parse(read_file(dir.path / "t.json")).as_object().contains("traceEvents"));
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    BOOST_TEST(!contains(entry.path().string(), ".partial"), "left behind: " << entry.path());
  }
}

BOOST_AUTO_TEST_CASE(a_program_without_run_markers_is_one_run) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "--region", "work", "-o", "p.json", RUN_CHILD, "nomarkers"});
  BOOST_TEST(run.status == 0);
  const json::object profile = load_profile(dir.path / "p.json");
  BOOST_TEST(profile.at("runs").as_array().size() == 1u);
  BOOST_TEST(has(warning_codes(profile), "NO_RUN_MARKERS"));
}

BOOST_AUTO_TEST_CASE(a_crash_leaves_the_runs_recorded_before_it) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "--region", "work", "-o", "p.json", RUN_CHILD, "abort"});
  BOOST_TEST(run.status == 128 + SIGABRT);
  BOOST_TEST(contains(run.err, "regionprof: the program was killed by signal 6 (SIGABRT)"));
  const json::object profile = load_profile(dir.path / "p.json");
  BOOST_TEST(profile.at("runs").as_array().size() == 2u);  // the third step never closed
  BOOST_TEST(profile.at("target").at("ended_by_signal").as_string() == "SIGABRT");
}

BOOST_AUTO_TEST_CASE(sigterm_ends_the_program_as_it_would_and_keeps_its_runs) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "-o", "p.json", RUN_CHILD, "term"});
  BOOST_TEST(run.status == 128 + SIGTERM);
  const json::object profile = load_profile(dir.path / "p.json");
  BOOST_TEST(profile.at("runs").as_array().size() == 2u);
  BOOST_TEST(profile.at("target").at("ended_by_signal").as_string() == "SIGTERM");
}

BOOST_AUTO_TEST_CASE(a_forked_child_does_not_overwrite_the_profile) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "-o", "p.json", RUN_CHILD, "fork"});
  BOOST_TEST(run.status == 0);
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 2u);  // the parent's 2, not 5
}

BOOST_AUTO_TEST_CASE(a_wrapper_that_starts_the_real_program_profiles_the_real_program) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "-o", "p.json", RUN_CHILD, "wrapper"});
  BOOST_TEST(run.status == 5);
  BOOST_TEST(run.out == "run_child: hello\n");
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 2u);
  BOOST_TEST(!fs::exists(dir.path / "p.json.claim"));
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    BOOST_TEST(!contains(entry.path().string(), ".claim"), "left behind: " << entry.path());
  }
}

BOOST_AUTO_TEST_CASE(outputs_are_relative_to_where_regionprof_started) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--run-marker", "step", "-o", "p.json", RUN_CHILD, "chdir"});
  BOOST_TEST(run.status == 0);
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 2u);
}

BOOST_AUTO_TEST_CASE(what_cannot_run_is_refused_clearly) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome missing = regionprof_run(dir.path, {"--", "regionprof-no-such-program"});
  BOOST_TEST(missing.status == 127);
  BOOST_TEST(contains(missing.err, "cannot run 'regionprof-no-such-program': No such file or directory"));
  const outcome bad_regex = regionprof_run(dir.path, {"--region", "(", "--", RUN_CHILD});
  BOOST_TEST(bad_regex.status == 2);
  BOOST_TEST(contains(bad_regex.err, "region rule '(': invalid regex (RE2 syntax"));
  const outcome no_program = regionprof_run(dir.path, {"--run-marker", "step"});
  BOOST_TEST(no_program.status == 2);
  BOOST_TEST(contains(no_program.err, "missing PROGRAM"));
  const outcome unknown = regionprof_run(dir.path, {"--bogus", RUN_CHILD});
  BOOST_TEST(unknown.status == 2);
  BOOST_TEST(!fs::exists(dir.path / "profile.json"));
}

// NVTX nesting through the capture: `outer` > `inner` > `inner` becomes the region tree (rule 14).
BOOST_AUTO_TEST_CASE(nested_nvtx_ranges_make_the_region_tree) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(
      dir.path, {"--run-marker", "step", "--region", "(outer|inner)=r", "-o", "p.json", "--", RUN_CHILD, "nested"});
  BOOST_TEST_REQUIRE(run.status == 0);
  const json::object profile = load_profile(dir.path / "p.json");
  const json::array& runs = profile.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 2u);
  for (const json::value& r : runs) {
    const json::array& tree = r.at("tree").as_array();
    BOOST_TEST_REQUIRE(tree.size() == 3u);  // r:outer, r:outer/r:inner, r:outer/r:inner/r:inner
    BOOST_TEST(tree[0].at("path").as_array().size() == 1u);
    BOOST_TEST(tree[1].at("path").as_array().size() == 2u);
    BOOST_TEST(tree[2].at("path").as_array().size() == 3u);
    BOOST_TEST(tree[2].at("path").at(2).as_string() == "r:inner");
    BOOST_TEST(tree[1].at("calls").as_int64() == 2);
    BOOST_TEST(tree[2].at("calls").as_int64() == 1);
    BOOST_TEST(number(tree[0].at("cpu_time_us")) == number(r.at("regions").at(0).at("cpu_time_us")));
    const double self_inner = number(tree[1].at("self_cpu_time_us"));
    BOOST_TEST(std::abs(self_inner - (number(tree[1].at("cpu_time_us")) - number(tree[2].at("cpu_time_us")))) < 1e-6);
    BOOST_TEST(self_inner >= 0.0);
  }
  BOOST_TEST(profile.at("tree_summary").as_array().size() == 3u);
}

// docs/design.md, rule 20: with only `outer` a region, the `inner` ranges inside it are its ops (3 a
// run, the third inside the second: self time less than total), in the JSON and the Markdown report.
BOOST_AUTO_TEST_CASE(nvtx_ranges_inside_a_region_are_its_ops) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(
      dir.path, {"--run-marker", "step", "--region", "outer=r", "-o", "p.json", "--", RUN_CHILD, "nested"});
  BOOST_TEST_REQUIRE(run.status == 0);
  const json::object profile = load_profile(dir.path / "p.json");
  const json::array& entries = profile.at("region_ops").as_array();
  BOOST_TEST_REQUIRE(entries.size() == 2u);
  BOOST_TEST(entries[0].at("region_id").as_string() == "r:outer");
  BOOST_TEST(entries[1].at("region_id").as_string() == "(residual)");
  BOOST_TEST(entries[1].at("rows").as_array().empty());
  const json::array& rows = entries[0].at("rows").as_array();
  BOOST_TEST_REQUIRE(rows.size() == 1u);
  BOOST_TEST(rows[0].at("key").as_string() == "inner");
  BOOST_TEST(rows[0].at("device_type").as_string() == "CPU");
  BOOST_TEST(rows[0].at("count").as_int64() == 6);
  const double total = number(rows[0].at("cpu_time_total_us"));
  const double self = number(rows[0].at("self_cpu_time_total_us"));
  BOOST_TEST(self > 0.0);
  BOOST_TEST(self < total);
  // The nested `inner` counts in its parent's total too (rule 10); the self times lie inside `outer`.
  BOOST_TEST(self <= number(profile.at("runs").at(0).at("regions").at(0).at("cpu_time_us")) +
                         number(profile.at("runs").at(1).at("regions").at(0).at("cpu_time_us")));

  const outcome markdown =
      regionprof_run(dir.path, {"--run-marker", "step", "--region", "outer=r", "--", RUN_CHILD, "nested"});
  BOOST_TEST_REQUIRE(markdown.status == 0);
  BOOST_TEST(markdown.out.find("\n## Ops per region\n") != std::string::npos);
  BOOST_TEST(markdown.out.find("\n### `r:outer`\n") != std::string::npos);
  BOOST_TEST(markdown.out.find("| `inner` | CPU  |     6 |") != std::string::npos, markdown.out);
}

namespace {

/// The run indices of a profile's runs, in order.
std::vector<std::int64_t> run_indices(const json::object& profile) {
  std::vector<std::int64_t> out;
  for (const json::value& run : profile.at("runs").as_array()) out.push_back(run.at("run_index").to_number<std::int64_t>());
  return out;
}

std::vector<std::int64_t> sequence(std::int64_t from, std::int64_t count) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(from + i);
  return out;
}

}  // namespace

// --window-runs N: ceil(total / N) profiles, window k holding runs k N ... with their indices continued,
// the last one partial; cut at exit (a fast program) and by the library's thread while the program runs
// (window_app sleeps 30 ms after every 2 runs) alike. Total 7 and N 3: windows of 3, 3, 1. Without
// --processes %n names the window as %w does (issue 22's `-o 'w/prof-%n.json'`).
BOOST_AUTO_TEST_CASE(window_runs_write_one_profile_per_window) {
  for (const char* pattern : {"w/prof-%w.json", "w/prof-%n.json"}) {
    for (const char* sleep_every : {"0", "2"}) {
      BOOST_TEST_CONTEXT(pattern << ", sleep every " << sleep_every) {
        cli_test::scratch_dir dir{"regionprof-run"};
        fs::create_directory(dir.path / "w");
        const outcome run = regionprof_run(dir.path, {"--window-runs", "3", "--run-marker", "step", "--region",
                                                      "layer_(.*)=layer", "-o", pattern, "--", WINDOW_APP,
                                                      "7", sleep_every});
        BOOST_TEST(run.status == 0);
        BOOST_TEST(run.out.empty());
        BOOST_TEST(contains(run.err, "regionprof: wrote w/prof-0.json (3 runs, 1 regions"), run.err);
        BOOST_TEST(contains(run.err, ", w/prof-1.json, w/prof-2.json\n"), run.err);
        const std::int64_t counts[] = {3, 3, 1};
        for (int k = 0; k < 3; ++k) {
          const json::object profile = load_profile(dir.path / "w" / ("prof-" + std::to_string(k) + ".json"));
          BOOST_TEST(run_indices(profile) == sequence(3 * k, counts[k]), boost::test_tools::per_element());
          BOOST_TEST(profile.at("target").at("window").to_number<int>() == k);
          BOOST_TEST(profile.at("target").at("window_runs").to_number<int>() == 3);
          BOOST_TEST(profile.at("regions").as_array().size() == 1u);
          BOOST_TEST(profile.at("config").at("warmup_runs").to_number<int>() == 0);
          const std::vector<std::string> codes = warning_codes(profile);
          BOOST_TEST(!has(codes, "UNBALANCED_RANGES"));
          BOOST_TEST(!has(codes, "NO_RUN_MARKERS"));
          BOOST_TEST(has(codes, "DEVICE_TRACING_UNAVAILABLE"));  // every window says it is CPU-only
        }
        BOOST_TEST(!fs::exists(dir.path / "w" / "prof-3.json"));
        BOOST_TEST(!fs::exists(dir.path / pattern));  // the placeholder was expanded
      }
    }
  }
}

// A total that N divides gives exactly total / N windows (no empty last one), and the warm-up runs are
// discarded from window 0 only: 2 warm-up + 9 runs in windows of 3 are windows of 3 (after the 2), 3, 3.
BOOST_AUTO_TEST_CASE(window_runs_divisible_total_and_warmup) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--window-runs", "3", "--warmup-runs", "2", "--run-marker", "step",
                                                "-o", "p%w.json", "--", WINDOW_APP, "11"});
  BOOST_TEST(run.status == 0);
  for (int k = 0; k < 3; ++k) {
    const json::object profile = load_profile(dir.path / ("p" + std::to_string(k) + ".json"));
    BOOST_TEST(run_indices(profile) == sequence(3 * k, 3), boost::test_tools::per_element());
    BOOST_TEST(profile.at("config").at("warmup_runs").to_number<int>() == (k == 0 ? 2 : 0));
  }
  BOOST_TEST(!fs::exists(dir.path / "p3.json"));
}

// Without %w every window would write one file: a usage error naming the flag, nothing runs; so is the
// default profile.json, and N 0.
BOOST_AUTO_TEST_CASE(window_runs_without_the_window_index_is_a_usage_error) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome one_file = regionprof_run(dir.path, {"--window-runs", "5", "-o", "p.json", "--", WINDOW_APP, "7"});
  BOOST_TEST(one_file.status == 2);
  BOOST_TEST(contains(one_file.err, "option -o: output path 'p.json': with windows a profile is written "
                                    "per window, and every window would write this one file; add %w (the window index)"),
             one_file.err);
  const outcome markdown = regionprof_run(dir.path, {"--window-runs", "5", "-o", "p-%w.json", "--markdown", "p.md",
                                                     "--", WINDOW_APP, "7"});
  BOOST_TEST(markdown.status == 2);
  BOOST_TEST(contains(markdown.err, "option --markdown: output path 'p.md'"), markdown.err);
  const outcome default_path = regionprof_run(dir.path, {"--window-runs", "5", "--", WINDOW_APP, "7"});
  BOOST_TEST(default_path.status == 2);
  BOOST_TEST(contains(default_path.err, "output path 'profile.json'"), default_path.err);
  BOOST_TEST(regionprof_run(dir.path, {"--window-runs", "0", "-o", "p-%w.json", "--", WINDOW_APP, "7"}).status == 2);
  BOOST_TEST(fs::is_empty(dir.path));
}

// --processes and --window-runs together: %n the process, %w the window.
BOOST_AUTO_TEST_CASE(window_runs_with_processes) {
  cli_test::scratch_dir dir{"regionprof-run"};
  const outcome run = regionprof_run(dir.path, {"--processes", "2", "--window-runs", "4", "--run-marker", "step",
                                                "-o", "p%n-w%w.json", "--", WINDOW_APP, "6"});
  BOOST_TEST(run.status == 0);
  for (const char* process : {"0", "1"}) {
    BOOST_TEST(run_indices(load_profile(dir.path / (std::string("p") + process + "-w0.json"))) == sequence(0, 4),
               boost::test_tools::per_element());
    BOOST_TEST(run_indices(load_profile(dir.path / (std::string("p") + process + "-w1.json"))) == sequence(4, 2),
               boost::test_tools::per_element());
    BOOST_TEST(!fs::exists(dir.path / (std::string("p") + process + "-w2.json")));
  }
}

BOOST_AUTO_TEST_SUITE_END()
