// Job reports (regionprof/job/job.hpp): rank placement, cross-rank figures computed by hand, mismatches
// merged by run index with RANK_MISMATCH, and the JSON, Markdown and Chrome trace views.
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/job/job.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"

using namespace regionprof;

namespace {

struct region_row {
  std::string id;
  double cpu_us;
  std::optional<double> device_us;
};

struct run_row {
  double cpu_us;
  std::vector<region_row> regions;
};

/// A minimal saved profile (the keys the reader requires, plus target.rank and region device times).
named_profile profile(std::optional<int> rank, const std::vector<run_row>& runs, const std::string& name,
                      std::optional<std::string> rank_key = "rank",
                      std::optional<boost::json::object> distributed_info = std::nullopt) {
  boost::json::object target{{"type", "process"}, {"host", "h" + name}, {"pid", 100 + rank.value_or(0)}};
  if (rank && rank_key) target[*rank_key] = *rank;
  if (distributed_info) target["distributedInfo"] = *distributed_info;
  boost::json::array run_array;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    boost::json::array regions;
    for (const region_row& r : runs[i].regions) {
      boost::json::object entry{{"region_id", r.id}, {"calls", 1}, {"cpu_time_us", r.cpu_us}};
      if (r.device_us) entry["device_time_us"] = *r.device_us;
      regions.push_back(std::move(entry));
    }
    run_array.push_back(boost::json::object{
        {"run_index", i},
        {"timing", boost::json::object{{"wall_time_us", runs[i].cpu_us}, {"cpu_time_us", runs[i].cpu_us}}},
        {"regions", std::move(regions)},
        {"residual", boost::json::object{{"cpu_time_us", 0.0}}}});
  }
  const boost::json::object doc{{"schema_version", 1}, {"created_at", "2024-01-02T03:04:05Z"},
                                {"target", std::move(target)}, {"runs", std::move(run_array)}};
  return {name, read_profile_text(boost::json::serialize(doc), name)};
}

const cross_rank_region& region(const cross_rank_run& run, const std::string& id) {
  for (const cross_rank_region& r : run.regions) {
    if (r.region_id == id) return r;
  }
  BOOST_FAIL("no region " + id);
  throw;
}

/// Ranks 2, 0, 1 in that order. Run 0 CPU: rank 0 100 us, rank 1 130 us, rank 2 110 us;
/// region a: 40, 70, 50 us; region b: CPU 20, 20, 20 us, device 10, 10, 30 us.
std::vector<named_profile> three_ranks() {
  std::vector<named_profile> p;
  p.push_back(profile(2, {{110, {{"r:a", 50, {}}, {"r:b", 20, 30}}}}, "p2.json"));
  p.push_back(profile(0, {{100, {{"r:a", 40, {}}, {"r:b", 20, 10}}}}, "p0.json"));
  p.push_back(profile(1, {{130, {{"r:a", 70, {}}, {"r:b", 20, 10}}}}, "p1.json"));
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(job_report_tests)

BOOST_AUTO_TEST_CASE(ranks_are_placed_by_their_rank_and_stragglers_found) {
  const job_report job = merge_ranks(three_ranks());
  BOOST_TEST_REQUIRE(job.ranks.size() == 3u);
  BOOST_TEST(job.ranks[0].rank == 0u);
  BOOST_TEST(job.ranks[0].file == "p0.json");
  BOOST_TEST(job.ranks[0].host == "hp0.json");
  BOOST_TEST(*job.ranks[0].pid == 100);
  BOOST_TEST(job.ranks[2].rank == 2u);
  BOOST_TEST(job.warnings.empty());
  BOOST_TEST_REQUIRE(job.runs.size() == 1u);
  const cross_rank_run& run = job.runs[0];
  BOOST_TEST(run.cpu.median_ns == 110000.0);  // 100, 110, 130 us
  BOOST_TEST(run.cpu.min_ns == 100000);
  BOOST_TEST(run.cpu.max_ns == 130000);
  BOOST_TEST(run.cpu.slowest_rank == 1u);
  BOOST_TEST(*run.cpu.imbalance == 130.0 / 110.0);
  BOOST_TEST(run.cpu.ranks == 3u);
  BOOST_TEST(!run.device.has_value());  // no run-level device time in these profiles
  const cross_rank_region& a = region(run, "r:a");
  BOOST_TEST(a.cpu.median_ns == 50000.0);  // 40, 50, 70
  BOOST_TEST(a.cpu.slowest_rank == 1u);
  BOOST_TEST(*a.cpu.imbalance == 1.4);  // 70 / 50
  BOOST_TEST(!a.device.has_value());
  const cross_rank_region& b = region(run, "r:b");
  BOOST_TEST(b.cpu.slowest_rank == 0u);  // all equal: the lowest rank
  BOOST_TEST(*b.cpu.imbalance == 1.0);
  BOOST_TEST(b.device->median_ns == 10000.0);  // 10, 10, 30
  BOOST_TEST(b.device->slowest_rank == 2u);
  BOOST_TEST(*b.device->imbalance == 3.0);
  BOOST_TEST(job.runs[0].regions[0].region_id == "r:a");  // first appearance over ranks in rank order
}

BOOST_AUTO_TEST_CASE(an_even_count_takes_the_mean_of_the_middle_two) {
  std::vector<named_profile> p;
  p.push_back(profile(0, {{100, {{"r:a", 0, {}}}}}, "p0.json"));
  p.push_back(profile(1, {{140, {{"r:a", 0, {}}}}}, "p1.json"));
  const job_report job = merge_ranks(std::move(p));
  BOOST_TEST(job.runs[0].cpu.median_ns == 120000.0);
  BOOST_TEST(*job.runs[0].cpu.imbalance == 140.0 / 120.0);
  BOOST_TEST(!job.runs[0].regions[0].cpu.imbalance.has_value());  // median 0: no ratio
}

BOOST_AUTO_TEST_CASE(mismatched_ranks_are_merged_by_run_index_with_a_warning) {
  std::vector<named_profile> p;
  p.push_back(profile(0, {{100, {{"r:a", 40, {}}, {"r:c", 5, {}}}}, {200, {{"r:a", 80, {}}}}}, "p0.json"));
  p.push_back(profile(1, {{120, {{"r:a", 60, {}}}}}, "p1.json"));
  const job_report job = merge_ranks(std::move(p));
  BOOST_TEST_REQUIRE(job.runs.size() == 2u);
  BOOST_TEST(job.runs[1].cpu.ranks == 1u);  // only rank 0 has run 1
  BOOST_TEST(job.runs[1].cpu.median_ns == 200000.0);
  BOOST_TEST(region(job.runs[0], "r:c").cpu.ranks == 1u);
  BOOST_TEST(region(job.runs[0], "r:a").cpu.ranks == 2u);
  BOOST_TEST_REQUIRE(job.warnings.size() == 2u);
  BOOST_TEST((job.warnings[0].code == warning_code::rank_mismatch));
  BOOST_TEST(job.warnings[0].message ==
             "the ranks have different run counts (1 runs: rank 1; 2 runs: rank 0); runs were merged by run "
             "index, each over the ranks that have it");
  BOOST_TEST(job.warnings[1].message ==
             "1 regions of a run are missing on some ranks that have the run (e.g. 'r:c' in run 0 is on 1 of 2 "
             "ranks); their figures are over the ranks that have them");
}

BOOST_AUTO_TEST_CASE(without_distinct_ranks_the_input_order_decides) {
  std::vector<named_profile> none;
  none.push_back(profile(std::nullopt, {{100, {}}}, "x.json"));
  none.push_back(profile(std::nullopt, {{300, {}}}, "y.json"));
  const job_report plain = merge_ranks(std::move(none));
  BOOST_TEST(plain.ranks[1].file == "y.json");
  BOOST_TEST(plain.runs[0].cpu.slowest_rank == 1u);
  BOOST_TEST(plain.warnings.empty());  // none has a rank: nothing to disagree with

  std::vector<named_profile> twice;
  twice.push_back(profile(3, {{100, {}}}, "x.json"));
  twice.push_back(profile(3, {{300, {}}}, "y.json"));
  const job_report repeated = merge_ranks(std::move(twice));
  BOOST_TEST(repeated.ranks[0].rank == 0u);
  BOOST_TEST(repeated.ranks[1].rank == 1u);
  BOOST_TEST_REQUIRE(repeated.warnings.size() == 1u);
  BOOST_TEST((repeated.warnings[0].code == warning_code::rank_mismatch));

  std::vector<named_profile> kineto;  // analyze of a Kineto trace: target.distributedInfo.rank
  kineto.push_back(profile(std::nullopt, {{100, {}}}, "k7.json", "rank", boost::json::object{{"rank", 7}}));
  kineto.push_back(profile(std::nullopt, {{100, {}}}, "k5.json", "rank", boost::json::object{{"rank", 5}}));
  const job_report by_info = merge_ranks(std::move(kineto));
  BOOST_TEST(by_info.ranks[0].rank == 5u);
  BOOST_TEST(by_info.ranks[0].file == "k5.json");
  BOOST_CHECK_THROW(merge_ranks({}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(the_json_document_holds_every_profile_and_the_figures) {
  std::vector<named_profile> input = three_ranks();
  // Each rank's profile is its own JSON report, nested.
  const boost::json::value rank0_document = boost::json::parse(to_json(input[1].profile));
  const std::string text = job_to_json(merge_ranks(std::move(input)));
  BOOST_TEST(text.starts_with("{\n  \"kind\": \"regionprof_job\",\n  \"schema_version\": 1,\n"));
  BOOST_TEST(text.ends_with("\n}\n"));
  const boost::json::value job = boost::json::parse(text);
  BOOST_TEST(job.at("rank_count").to_number<int>() == 3);
  const boost::json::object& rank0 = job.at("ranks").at(0).as_object();
  BOOST_TEST(rank0.at("rank").to_number<int>() == 0);
  BOOST_TEST(rank0.at("host").as_string() == "hp0.json");
  BOOST_TEST(rank0.at("pid").to_number<int>() == 100);
  BOOST_TEST(rank0.at("file").as_string() == "p0.json");
  BOOST_TEST(rank0.at("profile") == rank0_document);
  const boost::json::object& a = job.at("cross_rank").at("runs").at(0).at("regions").at(0).as_object();
  BOOST_TEST(a.at("region_id").as_string() == "r:a");
  BOOST_TEST(a.at("cpu_time_us").at("median").as_double() == 50.0);
  BOOST_TEST(a.at("cpu_time_us").at("min").as_double() == 40.0);
  BOOST_TEST(a.at("cpu_time_us").at("max").as_double() == 70.0);
  BOOST_TEST(a.at("cpu_time_us").at("slowest_rank").to_number<int>() == 1);
  BOOST_TEST(a.at("cpu_time_us").at("imbalance").as_double() == 1.4);
  BOOST_TEST(a.at("cpu_time_us").at("ranks").to_number<int>() == 3);
  BOOST_TEST(!a.contains("device_time_us"));
  const boost::json::object& run0 = job.at("cross_rank").at("runs").at(0).as_object();
  BOOST_TEST(run0.at("run_index").to_number<int>() == 0);
  BOOST_TEST(run0.at("ranks").to_number<int>() == 3);
  BOOST_TEST(run0.at("timing").at("cpu_time_us").at("slowest_rank").to_number<int>() == 1);
  BOOST_TEST(job.at("warnings").as_array().empty());
}

BOOST_AUTO_TEST_CASE(the_markdown_leads_with_the_stragglers) {
  const std::string md = job_to_markdown(merge_ranks(three_ranks()));
  BOOST_TEST(md.starts_with("# regionprof job report\n"));
  const std::size_t stragglers = md.find("## Stragglers");
  BOOST_TEST_REQUIRE(stragglers != std::string::npos);
  BOOST_TEST(stragglers < md.find("## Runs across ranks"));
  BOOST_TEST(md.find("## Runs across ranks") < md.find("## Ranks"));
  // Lost time (max - median): a CPU 20 us (rank 1), b device 20 us (rank 2), b CPU 0: a first (ties keep order).
  const std::size_t first_row = md.find("|   0 | `r:a`");
  BOOST_TEST_REQUIRE(first_row != std::string::npos);
  BOOST_TEST(first_row < md.find("| `r:b`  | device"));
  BOOST_TEST(md.find("|   0 | `r:a`  | CPU    | 50.000 | 40.000 | 70.000 |       20.000 |            1 |     1.400 |     3 |\n") !=
             std::string::npos, md);
}

BOOST_AUTO_TEST_CASE(the_trace_has_one_process_per_rank_and_aligned_runs) {
  std::vector<named_profile> p;
  p.push_back(profile(0, {{100, {{"r:a", 40, 7}}}, {50, {}}}, "p0.json"));
  p.push_back(profile(1, {{130, {{"r:a", 60, {}}}}, {60, {}}}, "p1.json"));
  std::ostringstream out;
  write_job_trace(merge_ranks(std::move(p)), out);
  const boost::json::value trace = boost::json::parse(out.str());
  std::vector<std::string> runs;
  bool device_region = false;
  for (const boost::json::value& e : trace.at("traceEvents").as_array()) {
    const boost::json::object& event = e.as_object();
    if (event.at("ph").as_string() == "M") continue;
    if (event.at("cat").as_string() == "run") {
      runs.push_back(std::to_string(event.at("pid").to_number<int>()) + "@" +
                     std::to_string(static_cast<int>(event.at("ts").to_number<double>())) + "+" +
                     std::to_string(static_cast<int>(event.at("dur").to_number<double>())));
    }
    if (event.at("cat").as_string() == "region_device") {
      device_region = true;
      BOOST_TEST(event.at("tid").to_number<int>() == 1);
      BOOST_TEST(event.at("dur").as_double() == 7.0);
    }
  }
  // Run 1 of both ranks starts at 130 us, where the slowest rank's run 0 ended.
  const std::vector<std::string> expected{"0@0+100", "0@130+50", "1@0+130", "1@130+60"};
  BOOST_TEST(runs == expected, boost::test_tools::per_element());
  BOOST_TEST(device_region);
}

BOOST_AUTO_TEST_SUITE_END()
