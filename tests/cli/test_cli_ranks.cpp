// Job reports from the command line: `regionprof analyze` with one trace per rank (the two shared ranks
// of REGIONPROF_TRACES_DIR; skipped, exit 77, without it) and `regionprof merge` of saved profiles;
// every cross-rank figure is recomputed here from the single-rank reports.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "cli_runner.hpp"
#include "support/shared_traces.hpp"

namespace {

namespace json = boost::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::vector<std::string> sampled_rules{"--run-marker", R"(ProfilerStep#\d+)", "--region", "## (.*) ##=phase"};

json::object analyze_to_json(const std::vector<std::string>& traces, const std::string& name) {
  const std::string out = cli_test::temp_path(name);
  std::vector<std::string> args{"analyze"};
  args.insert(args.end(), sampled_rules.begin(), sampled_rules.end());
  args.insert(args.end(), {"-o", out});
  args.insert(args.end(), traces.begin(), traces.end());
  const cli_test::cli_result r = cli_test::run_cli(args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return json::parse(cli_test::read_file(out)).as_object();
}

double us(const json::value& v) { return v.is_double() ? v.as_double() : static_cast<double>(v.to_number<std::int64_t>()); }

/// The region's figure in one rank's run, if the run has the region.
const json::value* region_figure(const json::object& run, const std::string& id, const char* key) {
  for (const json::value& r : run.at("regions").as_array()) {
    if (r.at("region_id").as_string() == id) return r.as_object().if_contains(key);
  }
  return nullptr;
}

/// `figure` (median, min, max, slowest_rank, imbalance) against the two ranks' own values.
void check_figure(const json::object& figure, double rank0, double rank1) {
  BOOST_TEST(us(figure.at("min")) == std::min(rank0, rank1));
  BOOST_TEST(us(figure.at("max")) == std::max(rank0, rank1));
  BOOST_TEST(us(figure.at("median")) == (rank0 + rank1) / 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(figure.at("slowest_rank").to_number<int>() == (rank1 > rank0 ? 1 : 0));
  if (rank0 + rank1 > 0) {
    BOOST_TEST(figure.at("imbalance").as_double() == std::max(rank0, rank1) / ((rank0 + rank1) / 2),
               boost::test_tools::tolerance(1e-9));
  }
  BOOST_TEST(figure.at("ranks").to_number<int>() == 2);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_ranks)

// docs/cli.md: the two shared ranks of one 128-rank job -> one job report whose per-rank runs are the
// single-rank analyses' and whose stragglers are the ranks with the larger figure.
BOOST_AUTO_TEST_CASE(two_shared_ranks_give_one_job_report) {
  const std::string rank0 = regionprof::test::shared_trace("sampled_rank0_kineto.json.gz");
  const std::string rank1 = regionprof::test::shared_trace("sampled_rank1_kineto.json.gz");
  const json::object single0 = analyze_to_json({rank0}, "single0.json");
  const json::object single1 = analyze_to_json({rank1}, "single1.json");
  const json::object job = analyze_to_json({rank1, rank0}, "job.json");  // argument order does not place ranks
  BOOST_TEST(job.at("kind").as_string() == "regionprof_job");
  BOOST_TEST_REQUIRE(job.at("ranks").as_array().size() == 2u);
  const json::object* singles[] = {&single0, &single1};
  for (std::size_t r = 0; r < 2; ++r) {
    const json::object& rank = job.at("ranks").at(r).as_object();
    BOOST_TEST(rank.at("rank").to_number<int>() == static_cast<int>(r));  // distributedInfo.rank
    BOOST_TEST(rank.at("profile").at("runs") == singles[r]->at("runs"));
    BOOST_TEST(rank.at("profile").at("regions") == singles[r]->at("regions"));
  }
  const json::array& runs = job.at("cross_rank").at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == single0.at("runs").as_array().size());
  BOOST_TEST_REQUIRE(runs.size() == single1.at("runs").as_array().size());
  std::size_t checked = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json::object& run0 = single0.at("runs").at(i).as_object();
    const json::object& run1 = single1.at("runs").at(i).as_object();
    check_figure(runs[i].at("timing").at("cpu_time_us").as_object(), us(run0.at("timing").at("cpu_time_us")),
                 us(run1.at("timing").at("cpu_time_us")));
    check_figure(runs[i].at("timing").at("device_time_us").as_object(), us(run0.at("timing").at("device_time_us")),
                 us(run1.at("timing").at("device_time_us")));
    for (const json::value& region : runs[i].at("regions").as_array()) {
      const std::string id(region.at("region_id").as_string());
      for (const char* domain : {"cpu_time_us", "device_time_us"}) {
        const json::value* a = region_figure(run0, id, domain);
        const json::value* b = region_figure(run1, id, domain);
        BOOST_TEST_REQUIRE((a != nullptr && b != nullptr), id << " is not in both ranks' run " << i);
        check_figure(region.at(domain).as_object(), us(*a), us(*b));
        ++checked;
      }
    }
  }
  BOOST_TEST(checked > 4u);
  BOOST_TEST(job.at("warnings").as_array().empty());

  const std::string md_path = cli_test::temp_path("job.md");
  std::vector<std::string> args{"analyze"};
  args.insert(args.end(), sampled_rules.begin(), sampled_rules.end());
  args.insert(args.end(), {"--markdown", md_path, "-o", cli_test::temp_path("job2.json"), rank0, rank1});
  BOOST_TEST(cli_test::run_cli(args).exit_code == 0);
  const std::string md = cli_test::read_file(md_path);
  BOOST_TEST(md.starts_with("# regionprof job report\n\n- Ranks: 2\n"));
  std::printf("straggler table of the shared ranks:\n%s\n", md.c_str());
}

BOOST_AUTO_TEST_CASE(merge_joins_saved_profiles) {
  const std::string trace = cli_test::data_file("basic.json");
  const std::string p0 = cli_test::temp_path("merge_p0.json");
  const std::string p1 = cli_test::temp_path("merge_p1.json");
  BOOST_REQUIRE(cli_test::run_cli({"analyze", "-o", p0, trace}).exit_code == 0);
  BOOST_REQUIRE(cli_test::run_cli({"analyze", "-o", p1, trace}).exit_code == 0);
  const cli_test::cli_result md = cli_test::run_cli({"merge", p0, p1});
  BOOST_TEST(md.exit_code == 0);
  BOOST_TEST(md.out.starts_with("# regionprof job report\n"));  // no -o: the Markdown on stdout
  const std::string job_path = cli_test::temp_path("merged.json");
  BOOST_TEST(cli_test::run_cli({"merge", p0, p1, "-o", job_path}).exit_code == 0);
  const json::object job = json::parse(cli_test::read_file(job_path)).as_object();
  BOOST_TEST(job.at("ranks").as_array().size() == 2u);
  BOOST_TEST(job.at("ranks").at(1).at("file").as_string() == p1);
  // The job report reads back (read_saved_report): `report` renders the Markdown `merge` printed.
  const cli_test::cli_result rendered = cli_test::run_cli({"report", job_path});
  BOOST_TEST(rendered.exit_code == 0, rendered.err);
  BOOST_TEST(rendered.out == md.out);
  const cli_test::cli_result as_table = cli_test::run_cli({"report", "--format", "table", job_path});
  BOOST_TEST(as_table.exit_code == 1);
  BOOST_TEST(as_table.err == "regionprof report: " + job_path + " is a job report: it renders as Markdown "
                             "(--format markdown); --format table and html render one profile, e.g. a rank's own\n",
             as_table.err);
  // A job report where a rank's profile is expected: one line that says what it is.
  const cli_test::cli_result job_as_rank = cli_test::run_cli({"merge", p0, job_path});
  BOOST_TEST(job_as_rank.exit_code == 1);
  BOOST_TEST(contains(job_as_rank.err, job_path + ": a job report (kind regionprof_job), not a profile"),
             job_as_rank.err);

  const cli_test::cli_result none = cli_test::run_cli({"merge"});
  BOOST_TEST(none.exit_code == 2);
  BOOST_TEST(contains(none.err, "regionprof merge: missing PROFILE"));
  const cli_test::cli_result bogus = cli_test::run_cli({"merge", "--region", "x", p0});
  BOOST_TEST(bogus.exit_code == 2);
  const cli_test::cli_result not_a_profile = cli_test::run_cli({"merge", p0, trace});
  BOOST_TEST(not_a_profile.exit_code == 1);
  BOOST_TEST(contains(not_a_profile.err, trace), not_a_profile.err);
  const cli_test::cli_result missing = cli_test::run_cli({"merge", p0, cli_test::temp_path("nope.json")});
  BOOST_TEST(missing.exit_code == 1);
  BOOST_TEST(contains(missing.err, "nope.json"));
  const auto help = cli_test::run_cli({"merge", "--help"});
  BOOST_TEST(contains(help.out, "usage: regionprof merge [-o JOB.json] [--markdown OUT.md] [--trace OUT.json] PROFILE..."));
}

BOOST_AUTO_TEST_CASE(analyze_of_several_traces_names_the_unreadable_one) {
  const std::string good = cli_test::data_file("basic.json");
  const std::string broken = cli_test::data_file("syntax_error.json");
  const cli_test::cli_result r = cli_test::run_cli({"analyze", good, broken, "-o", cli_test::temp_path("j.json")});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "regionprof: " + broken + ": invalid JSON in traceEvents[1]"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
