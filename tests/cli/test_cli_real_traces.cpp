// `regionprof analyze` on the real torch.profiler traces of REGIONPROF_TRACES_DIR (skipped, exit 77,
// without it): run count, region ids and calls, CPU and device times per run, with and without
// --cross-thread, and each region's ops (docs/design.md, rule 20; without --cross-thread), against the
// naive reference of tests/support/reference_attribution.hpp; first the engine, then the CLI's JSON.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "support/reference_attribution.hpp"
#include "support/shared_traces.hpp"

using namespace regionprof;

namespace {

struct scenario {
  std::string file;
  std::string run_marker;                  // --run-marker
  std::vector<std::string> region_args;    // each --region REGEX=KIND
  bool cross_thread = false;
};

const scenario sampled{"sampled_rank0_kineto.json.gz", R"(ProfilerStep#\d+)", {"## (.*) ##=phase"}};
// AlexNet's timed forward passes; the second of the two sits inside the first (the benchmark nests its
// annotations), so the engine counts one run and reports the nested marker (RUN_COUNT_MISMATCH).
const scenario alexnet{"alexnet_a100_kineto.json.gz",
                       R"(\[param\|pytorch\.model\.alex_net\|0\|0\|0\|measure\|forward\])",
                       {R"(\[param\|(clear_cache)\]=param)",
                        "aten::(conv2d|relu_|max_pool2d|adaptive_avg_pool2d|flatten|dropout|linear)=layer"}};

test::reference::result expected_result(const trace& t, const scenario& s) {
  test::reference::rules rules;
  rules.run_marker = std::regex(s.run_marker, std::regex::ECMAScript);
  for (const std::string& arg : s.region_args) {
    const auto eq = arg.rfind('=');
    rules.regions.push_back({std::regex(arg.substr(0, eq), std::regex::ECMAScript), arg.substr(eq + 1)});
  }
  rules.cross_thread = s.cross_thread;
  return test::reference::attribute(t, rules);
}

std::vector<test::reference::run_figures> expected_figures(const trace& t, const scenario& s) {
  return expected_result(t, s).runs;
}

analysis_options options_of(const scenario& s) {
  analysis_options options;
  options.run_marker = {match_kind::regex, s.run_marker, "run", ""};
  options.region_rules.clear();
  for (const std::string& arg : s.region_args) options.region_rules.push_back(parse_region_arg(arg));
  options.cross_thread = s.cross_thread;
  return options;
}

/// Rule 20: every owner's rows (all of them: row_limit lifted) are the reference's, for on-thread work
/// (the reference's rule 20 leaves cross_thread out).
void check_region_ops(const trace& t, const scenario& s, const test::reference::result& want) {
  analysis_options options = options_of(s);
  options.row_limit = 1'000'000;
  const analysis_result result = analyze(t, options);
  BOOST_TEST_REQUIRE(result.region_ops.size() == result.regions.size() + 1);
  std::size_t owners = 0;
  std::size_t rows = 0;
  for (const region_op_rows& entry : result.region_ops) {
    const std::string owner = entry.region == region_op_rows::residual ? std::string(region_op_rows::residual_id)
                                                                       : result.regions.at(entry.region).id;
    BOOST_TEST_CONTEXT("ops of " << owner) {
      const auto found = want.region_keys.find(owner);
      if (found == want.region_keys.end()) {
        BOOST_TEST(entry.rows.empty());
        continue;
      }
      ++owners;
      BOOST_TEST(entry.rows.size() == found->second.size());
      for (const key_average_row& row : entry.rows) {
        ++rows;
        BOOST_TEST_CONTEXT("key " << row.key << " " << to_string(row.type)) {
          const auto figures = found->second.find({row.key, row.type});
          BOOST_TEST_REQUIRE((figures != found->second.end()));
          BOOST_TEST(row.count == figures->second.count);
          BOOST_TEST(row.self_cpu_time_ns == figures->second.self_cpu);
          BOOST_TEST(row.cpu_time_total_ns == figures->second.total_cpu);
          BOOST_TEST(row.self_device_time_ns.value_or(-1) == figures->second.self_device);
          BOOST_TEST(row.device_time_total_ns.value_or(-1) == figures->second.total_device);
        }
      }
    }
  }
  BOOST_TEST(owners == want.region_keys.size());
  BOOST_TEST(rows > 0u);
}

void check_engine(const scenario& s, std::size_t expected_runs) {
  const trace t = import_kineto_trace(regionprof::test::shared_trace(s.file));
  const test::reference::result want = expected_result(t, s);
  if (!s.cross_thread) check_region_ops(t, s, want);
  const auto& expected = want.runs;
  BOOST_TEST_REQUIRE(expected.size() == expected_runs);
  const analysis_result result = analyze(t, options_of(s));
  BOOST_TEST_REQUIRE(result.runs.size() == expected.size());
  for (std::size_t r = 0; r < expected.size(); ++r) {
    BOOST_TEST_CONTEXT("run " << r) {
      const run_result& run = result.runs[r];
      BOOST_TEST(run.cpu_time_ns == expected[r].cpu_ns);
      BOOST_TEST_REQUIRE(run.device_time_ns.has_value());
      BOOST_TEST(*run.device_time_ns == expected[r].device_ns);
      BOOST_TEST(run.residual_cpu_ns == expected[r].residual_cpu_ns);
      BOOST_TEST(run.residual_device_ns.value_or(-1) == expected[r].residual_device_ns);
      std::set<std::string> seen;
      for (const region_aggregate& agg : run.regions) {
        const std::string& id = result.regions[agg.region].id;
        seen.insert(id);
        BOOST_TEST_CONTEXT("region " << id) {
          BOOST_TEST_REQUIRE(expected[r].regions.contains(id));
          const test::reference::region_figures& f = expected[r].regions.at(id);
          BOOST_TEST(agg.calls == f.calls);
          BOOST_TEST(agg.cpu_time_ns == f.cpu_ns);
          BOOST_TEST(agg.device_time_ns.value_or(-1) == f.device_ns);
          BOOST_TEST(agg.off_thread_cpu_time_ns.has_value() == f.seen_off_thread);
          BOOST_TEST(agg.off_thread_cpu_time_ns.value_or(0) == f.off_thread_cpu_ns);
        }
      }
      BOOST_TEST(seen.size() == expected[r].regions.size());
    }
  }
}

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

bool close(const boost::json::value& v, std::int64_t ns) { return std::abs(v.to_number<double>() - us(ns)) < 5e-4; }

void check_cli(const scenario& s, std::size_t expected_runs) {
  const std::string path = regionprof::test::shared_trace(s.file);
  const trace t = import_kineto_trace(path);
  const auto expected = expected_figures(t, s);
  BOOST_TEST_REQUIRE(expected.size() == expected_runs);

  const std::string json_path = cli_test::temp_path("report.json");
  std::vector<std::string> args{"analyze", "--run-marker", s.run_marker};
  for (const std::string& arg : s.region_args) {
    args.push_back("--region");
    args.push_back(arg);
  }
  if (s.cross_thread) args.push_back("--cross-thread");
  args.insert(args.end(), {"-o", json_path, path});
  const cli_test::cli_result cli = cli_test::run_cli(args);
  BOOST_TEST_REQUIRE(cli.exit_code == 0, cli.err);
  BOOST_TEST(cli.out.empty());  // with -o nothing goes to stdout
  const boost::json::value report = boost::json::parse(cli_test::read_file(json_path));
  std::filesystem::remove(json_path);

  BOOST_TEST(report.at("config").at("cross_thread").as_bool() == s.cross_thread);
  const auto& runs = report.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == expected.size());
  for (std::size_t r = 0; r < expected.size(); ++r) {
    BOOST_TEST_CONTEXT("run " << r) {
      const auto& run = runs[r];
      BOOST_TEST(run.at("run_index").to_number<std::size_t>() == r);
      BOOST_TEST(close(run.at("timing").at("cpu_time_us"), expected[r].cpu_ns));
      BOOST_TEST(close(run.at("timing").at("device_time_us"), expected[r].device_ns));
      BOOST_TEST(close(run.at("residual").at("cpu_time_us"), expected[r].residual_cpu_ns));
      BOOST_TEST(close(run.at("residual").at("device_time_us"), expected[r].residual_device_ns));
      const auto& regions = run.at("regions").as_array();
      BOOST_TEST(regions.size() == expected[r].regions.size());
      for (const auto& region : regions) {
        const std::string id(region.at("region_id").as_string());
        BOOST_TEST_CONTEXT("region " << id) {
          BOOST_TEST_REQUIRE(expected[r].regions.contains(id));
          const test::reference::region_figures& f = expected[r].regions.at(id);
          BOOST_TEST(region.at("calls").to_number<std::uint64_t>() == f.calls);
          BOOST_TEST(close(region.at("cpu_time_us"), f.cpu_ns));
          BOOST_TEST(close(region.at("device_time_us"), f.device_ns));
          BOOST_TEST(region.as_object().contains("off_thread_cpu_time_us") == f.seen_off_thread);
          if (f.seen_off_thread) BOOST_TEST(close(region.at("off_thread_cpu_time_us"), f.off_thread_cpu_ns));
        }
      }
    }
  }
}

scenario with_cross_thread(scenario s) {
  s.cross_thread = true;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(real_traces)

BOOST_AUTO_TEST_CASE(brute_force_knows_the_hand_checked_figures) {
  // Read off the files: ProfilerStep#551 and #552 last 607312 and 622928 us; AlexNet's outer timed
  // forward lasts 79678 us. A check of the reference itself, before it judges anything.
  const trace s = import_kineto_trace(regionprof::test::shared_trace(sampled.file));
  const auto step = expected_figures(s, sampled);
  BOOST_TEST_REQUIRE(step.size() == 2u);
  BOOST_TEST(step[0].cpu_ns == 607312000);
  BOOST_TEST(step[1].cpu_ns == 622928000);
  BOOST_TEST(step[0].regions.at("phase:forward").calls == 1u);
  BOOST_TEST(step[0].regions.at("phase:forward").cpu_ns == 132826000);
  BOOST_TEST(step[0].regions.at("phase:backward").cpu_ns == 234964000);
  BOOST_TEST(!step[0].regions.contains("phase:encoder fp8 None"));  // nested in forward, or off-thread
  const trace a = import_kineto_trace(regionprof::test::shared_trace(alexnet.file));
  const auto forward = expected_figures(a, alexnet);
  BOOST_TEST_REQUIRE(forward.size() == 1u);
  BOOST_TEST(forward[0].cpu_ns == 79678000);
  BOOST_TEST(forward[0].regions.at("param:clear_cache").calls == 1u);
  BOOST_TEST(forward[0].regions.at("param:clear_cache").cpu_ns == 43130000);
  BOOST_TEST(forward[0].regions.at("layer:conv2d").calls == 5u);
  BOOST_TEST(forward[0].regions.at("layer:linear").calls == 3u);
}

BOOST_AUTO_TEST_CASE(engine_sampled_rank0) { check_engine(sampled, 2); }
BOOST_AUTO_TEST_CASE(engine_sampled_rank0_cross_thread) { check_engine(with_cross_thread(sampled), 2); }
BOOST_AUTO_TEST_CASE(engine_alexnet) { check_engine(alexnet, 1); }
BOOST_AUTO_TEST_CASE(engine_alexnet_cross_thread) { check_engine(with_cross_thread(alexnet), 1); }

BOOST_AUTO_TEST_CASE(cli_sampled_rank0) { check_cli(sampled, 2); }
BOOST_AUTO_TEST_CASE(cli_sampled_rank0_cross_thread) { check_cli(with_cross_thread(sampled), 2); }
BOOST_AUTO_TEST_CASE(cli_alexnet) { check_cli(alexnet, 1); }
BOOST_AUTO_TEST_CASE(cli_alexnet_cross_thread) { check_cli(with_cross_thread(alexnet), 1); }

BOOST_AUTO_TEST_SUITE_END()
