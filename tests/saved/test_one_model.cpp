// The one result model (regionprof/model/profile.hpp): a profile read back from its JSON report writes every
// output byte for byte as the live profile (the analysis's result) does: JSON, Markdown, HTML, the
// terminal table; and a job report merged from read-back profiles equals the one merged from the live
// ones (JSON, Markdown, Chrome trace). On the shared real traces (REGIONPROF_TRACES_DIR; skipped
// without it) and the hand-made test traces (tests/support).
#include <algorithm>
#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/import/import.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "support/random_trace.hpp"
#include "support/report_fixtures.hpp"
#include "support/shared_traces.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;

namespace {

/// Every field the report context carries set to something other than its default, as a harness run
/// sets them.
report_context full_context() {
  report_context context;
  context.warmup_runs = 2;
  context.uses_inference_function = true;
  context.created_at = "2024-05-01T12:34:56Z";
  context.input = {3, {"batch", "mask"}};
  context.stopping = stopping_summary{"median_ci95", 12, 0.012345678901234568, 0.01, stop_reason::max_runs};
  machine_environment env;
  env.cpu_model = "Fake CPU @ 3.00GHz";
  env.cpu_count = 16;
  env.load_average = std::array<double, 3>{0.1, 17.25, 3.0};
  env.memory_total_bytes = 68719476736u;
  env.memory_available_bytes = 1234567168u;
  env.cpu_governor = "powersave";
  env.cpu_last_level_cache_bytes = 33554432u;
  // Both with one peak memory bandwidth (2 x 2619 MHz x 10^6 x 5120 bits / 8): declared device bytes
  // get a device_bytes_peak_fraction, derived again from the read-back environment.
  env.gpus.push_back({0, "NVIDIA H200", gpu_clock_state{1980, 3201, {"gpu_idle"}},
                      gpu_clock_state{1755, 3201, {"sw_power_cap", "hw_thermal_slowdown"}}, 3352320000000u});
  env.gpus.push_back({1, "NVIDIA H200", gpu_clock_state{1980, 3201, {}}, std::nullopt, 3352320000000u});
  context.environment = std::move(env);
  return context;
}

/// Where two texts first differ, for the failure message (the texts can be megabytes).
std::string first_difference(const std::string& a, const std::string& b) {
  const auto [at_a, at_b] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  const std::size_t at = static_cast<std::size_t>(at_a - a.begin());
  const std::size_t from = at < 80 ? 0 : at - 80;
  return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + ", first difference at byte " +
         std::to_string(at) + ":\n  live:  " + a.substr(from, 160) + "\n  saved: " + b.substr(from, 160);
}

void check_same(const std::string& what, const std::string& live, const std::string& saved) {
  BOOST_TEST(!live.empty(), what);
  BOOST_TEST(live == saved, what << ": " << (live == saved ? std::string() : first_difference(live, saved)));
}

/// Reads `live`'s JSON report back and checks every output of the read-back profile against the live one's.
Profile check_read_back(const Profile& live, const std::string& name) {
  const std::string json = to_json(live);
  Profile saved = read_profile_text(json, name + ".json");
  check_same(name + " JSON", json, to_json(saved));
  check_same(name + " Markdown", to_markdown(live), to_markdown(saved));
  check_same(name + " Markdown, every run in detail", to_markdown(live, {.runs_detail = 1000}),
             to_markdown(saved, {.runs_detail = 1000}));
  check_same(name + " HTML", to_html(live), to_html(saved));
  check_same(name + " terminal table", to_terminal_table(live, false), to_terminal_table(saved, false));
  check_same(name + " terminal table, coloured, 72 wide", to_terminal_table(live, true, 72), to_terminal_table(saved, true, 72));
  return saved;
}

std::string job_trace_text(const job_report& job) {
  std::ostringstream out;
  write_job_trace(job, out);
  return std::move(out).str();
}

/// Merges `live` (as `analyze TRACE...` does: without their events) and the same profiles read back from
/// their JSON reports, and checks that the job's JSON, Markdown and Chrome trace are the same.
void check_job(std::vector<named_profile> live) {
  std::vector<named_profile> saved;
  for (named_profile& rank : live) {
    saved.push_back({rank.file, read_profile_text(to_json(rank.profile), rank.file)});
    rank.profile = std::move(rank.profile).without_events();
  }
  job_report live_job = merge_ranks(std::move(live));
  job_report saved_job = merge_ranks(std::move(saved));
  live_job.created_at = saved_job.created_at = "2024-05-01T12:34:56Z";
  BOOST_TEST_REQUIRE(live_job.ranks.size() == saved_job.ranks.size());
  check_same("job JSON", job_to_json(live_job), job_to_json(saved_job));
  check_same("job Markdown", job_to_markdown(live_job), job_to_markdown(saved_job));
  check_same("job trace", job_trace_text(live_job), job_trace_text(saved_job));
  // The job report itself read back (read_job_text) is the same job: written again byte for byte.
  const std::string live_json = job_to_json(live_job);
  const job_report read_back = read_job_text(live_json, "job.json");
  BOOST_TEST(read_back.created_at == live_job.created_at);
  BOOST_TEST(read_back.warnings.size() == live_job.warnings.size());
  check_same("job JSON read back", live_json, job_to_json(read_back));
  check_same("job Markdown read back", job_to_markdown(live_job), job_to_markdown(read_back));
  check_same("job trace read back", job_trace_text(live_job), job_trace_text(read_back));
}

analysis_options real_trace_options(const std::string& run_marker, const std::vector<std::string>& regions) {
  analysis_options options;
  options.run_marker = {match_kind::regex, run_marker, "region", ""};
  options.region_rules.clear();
  for (const std::string& arg : regions) options.region_rules.push_back(parse_region_arg(arg));
  return options;
}

/// test/cli/test_cli_real_traces.cpp's scenarios.
analysis_options sampled_options() { return real_trace_options(R"(ProfilerStep#\d+)", {"## (.*) ##=phase"}); }
analysis_options alexnet_options() {
  return real_trace_options(R"(\[param\|pytorch\.model\.alex_net\|0\|0\|0\|measure\|forward\])",
                            {R"(\[param\|(clear_cache)\]=param)",
                             "aten::(conv2d|relu_|max_pool2d|adaptive_avg_pool2d|flatten|dropout|linear)=layer"});
}

Profile live_profile(const std::string& file, const analysis_options& options) {
  return Profile(import_kineto_trace(test::shared_trace(file)), options, full_context());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(one_model)

BOOST_AUTO_TEST_CASE(alexnet_trace_read_back_writes_the_same_outputs) {
  const Profile live = live_profile("alexnet_a100_kineto.json.gz", alexnet_options());
  BOOST_TEST_REQUIRE(live.result().has_device_data);  // device figures, key averages by device time
  BOOST_TEST_REQUIRE(!live.result().runs.empty());
  const Profile saved = check_read_back(live, "alexnet");
  BOOST_TEST(test::members_json(saved.source().target) == test::members_json(live.source().target));  // deviceProperties, ...
}

BOOST_AUTO_TEST_CASE(sampled_traces_read_back_write_the_same_outputs) {
  for (const char* file : {"sampled_rank0_kineto.json.gz", "sampled_rank1_kineto.json.gz"}) {
    BOOST_TEST_CONTEXT(file) {
      const Profile live = live_profile(file, sampled_options());
      BOOST_TEST_REQUIRE(live.result().runs.size() > 1u);
      check_read_back(live, file);
    }
  }
}

BOOST_AUTO_TEST_CASE(sampled_traces_without_the_region_tree_write_the_same_outputs) {
  analysis_options options = sampled_options();
  options.region_tree = false;
  options.cross_thread = true;
  options.row_limit = 7;
  check_read_back(live_profile("sampled_rank0_kineto.json.gz", options), "sampled_rank0_flat");
}

BOOST_AUTO_TEST_CASE(job_of_the_sampled_ranks_is_the_same_from_read_back_profiles) {
  std::vector<named_profile> ranks;
  for (const char* file : {"sampled_rank1_kineto.json.gz", "sampled_rank0_kineto.json.gz"}) {
    ranks.push_back({file, live_profile(file, sampled_options())});
  }
  check_job(std::move(ranks));
}

BOOST_AUTO_TEST_CASE(every_test_trace_read_back_writes_the_same_outputs) {
  for (const test::named_trace& t : test::test_traces()) {
    BOOST_TEST_CONTEXT(t.name) { check_read_back(Profile(t.value, t.options, full_context()), t.name); }
  }
}

BOOST_AUTO_TEST_CASE(declared_work_read_back_writes_the_same_outputs) {
  // Rule 18: work and throughput (per run and in region_summary, every view's columns), with and
  // without device data.
  for (const bool device : {false, true}) {
    const Profile live(test::declared_work_trace(device), analysis_options{}, full_context());
    BOOST_TEST_REQUIRE(to_json(live).find("\"throughput\"") != std::string::npos);
    // With device data, the fraction of the GPUs' shared peak, derived again from the read-back environment.
    BOOST_TEST((to_json(live).find("\"device_bytes_peak_fraction\"") != std::string::npos) == device);
    const Profile saved = check_read_back(live, device ? "declared_work_device" : "declared_work_cpu");
    const declared_work* saved_work = work_of(saved.result(), saved.result().runs.at(0).regions.at(0));
    const declared_work* live_work = work_of(live.result(), live.result().runs.at(0).regions.at(0));
    BOOST_TEST_REQUIRE((saved_work != nullptr && live_work != nullptr));
    BOOST_TEST((*saved_work == *live_work));
  }
}

BOOST_AUTO_TEST_CASE(memory_read_back_writes_the_same_outputs) {
  // Rule 21: memory figures per run, residual and region (and the summaries' medians, every view's
  // memory section), alone and in a job of two ranks.
  const Profile live(trace{}, analysis_options{}, full_context(), report_test::memory_result());
  BOOST_TEST_REQUIRE(to_json(live).find("\"peak_allocated_bytes\"") != std::string::npos);
  BOOST_TEST_REQUIRE(to_markdown(live).find("\n## Memory\n") != std::string::npos);
  BOOST_TEST_REQUIRE(to_html(live).find("<h2>Memory</h2>") != std::string::npos);
  BOOST_TEST_REQUIRE(to_terminal_table(live, false).find("\nmemory per region:") != std::string::npos);
  check_read_back(live, "memory");
  std::vector<named_profile> ranks;
  for (const char* file : {"m0.json", "m1.json"}) ranks.push_back({file, live});
  check_job(std::move(ranks));
}

BOOST_AUTO_TEST_CASE(random_traces_read_back_write_the_same_outputs) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      check_read_back(Profile(test::random_trace(seed), analysis_options{}, full_context()), "random");
    }
  }
}

BOOST_AUTO_TEST_CASE(job_of_test_traces_is_the_same_from_read_back_profiles) {
  std::vector<named_profile> ranks;
  for (const test::named_trace& t : test::test_traces()) {
    trace value = t.value;
    value.target.rank = ranks.size();
    value.target.host = "node-" + std::to_string(ranks.size() % 3);
    value.target.pid = static_cast<std::int64_t>(4000 + ranks.size());
    ranks.push_back({t.name + ".json", Profile(std::move(value), t.options, full_context())});
  }
  BOOST_TEST_REQUIRE(ranks.size() > 3u);
  check_job(std::move(ranks));
}

BOOST_AUTO_TEST_CASE(job_of_unranked_profiles_reads_back_in_file_order) {
  // No profile names its rank: ranks are their places in file order; reading back must not renumber.
  std::vector<named_profile> ranks;
  const auto& traces = test::test_traces();
  for (std::size_t i = 0; i < 3; ++i) {
    ranks.push_back({"r" + std::to_string(i) + ".json", Profile(traces[i].value, traces[i].options, full_context())});
  }
  ranks[1].profile = Profile(test::random_trace(7), analysis_options{}, full_context());
  check_job(std::move(ranks));
}

BOOST_AUTO_TEST_CASE(a_bad_job_report_names_the_file_and_the_key) {
  const auto message = [](const std::string& text) {
    try {
      read_job_text(text, "job.json");
    } catch (const profile_read_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  BOOST_TEST(message("[]") == "job.json: not a regionprof job report (not an object)");
  BOOST_TEST(message(R"({"schema_version":1,"runs":[]})") ==
             "job.json: not a regionprof job report (no \"kind\": \"regionprof_job\")");
  BOOST_TEST(message(R"({"kind":"regionprof_job","schema_version":2,"ranks":[]})") ==
             "job.json: schema_version: expected 1 (the job report schema this reader reads)");
  BOOST_TEST(message(R"({"kind":"regionprof_job","schema_version":1,"ranks":[]})") ==
             "job.json: ranks: expected a non-empty array of rank profiles");
  BOOST_TEST(message(R"({"kind":"regionprof_job","schema_version":1,"ranks":[{"file":"a.json"}]})") ==
             "job.json: ranks[0].profile: required key missing");
  BOOST_TEST(message(R"({"kind":"regionprof_job","schema_version":1,"ranks":[{"profile":{"schema_version":1}}]})") ==
             "job.json: ranks[0].profile.runs: required key missing");
  BOOST_TEST(message(R"({"kind":"regionprof_job","schema_version":1,"ranks":[{"profile":{"schema_version":1,)"
                     R"("runs":[{"run_index":0,"timing":{"wall_time_us":1.5,"cpu_time_us":"x"}}]}}]})") ==
             "job.json: ranks[0].profile.runs[0].timing.cpu_time_us: expected a number (microseconds), found a string");
  BOOST_TEST(message(R"({"kind":"regionprof_job")").starts_with("job.json: invalid JSON at line 1"));
}

BOOST_AUTO_TEST_SUITE_END()
