// `regionprof diff`: exit codes (0 same or faster, 3 slower beyond the gate, 1 input error, 2 usage),
// verdicts, and honest reruns of examples/cpu_pipeline passing the gate.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <fstream>
#include <string>
#include <string_view>

#include "cli_runner.hpp"
#include "test_profiles.hpp"

using cli_test::read_file;
using cli_test::run_cli;
using cli_test::temp_path;
namespace json = boost::json;

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

const json::object& region_domains(const json::value& diff, std::string_view id) {
  for (const json::value& region : diff.at("regions").as_array()) {
    if (region.at("region_id").as_string() == id) return region.at("domains").as_object();
  }
  throw std::runtime_error("no region " + std::string(id) + " in the diff");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(diff)

BOOST_AUTO_TEST_CASE(a_profile_against_itself_is_unchanged) {
  const std::string& profile = cli_test::pipeline_profile_a();
  const auto r = run_cli({"diff", "--fail-if-slower", "0", profile, profile});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(contains(r.out, "# regionprof diff\n"), r.out);
  BOOST_TEST(contains(r.out, "| `aot_module:parser`"), r.out);
  BOOST_TEST(contains(r.out, "with p < alpha: passed\n"), r.out);
  BOOST_TEST(!contains(r.out, "| slower"), r.out);
  BOOST_TEST(!contains(r.out, "| faster"), r.out);
  BOOST_TEST(!contains(r.out, "| within noise"), r.out);
  BOOST_TEST(contains(r.out, "unchanged"), r.out);
  // Identical samples: every value ties with its copy, so the normal approximation applies, and with
  // U_A = U_B = 200 its z is (200 - 200 - 0.5) / sigma < 0: p = 1.
  const std::string out_json = temp_path("self_diff.json");
  BOOST_TEST(run_cli({"diff", "-o", out_json, profile, profile}).exit_code == 0);
  const json::value diff = json::parse(read_file(out_json));
  BOOST_TEST(diff.at("kind").as_string() == "regionprof_diff");
  BOOST_TEST(diff.at("gate_failed").as_bool() == false);
  const json::object& cpu = region_domains(diff, "aot_module:parser").at("cpu_time_us").as_object();
  BOOST_TEST(cpu.at("verdict").as_string() == "unchanged");
  BOOST_TEST(cpu.at("p_value").to_number<double>() == 1.0);
  BOOST_TEST(cpu.at("change").to_number<double>() == 0.0);
  BOOST_TEST(cpu.at("a_runs").as_array().size() == 20u);
}

BOOST_AUTO_TEST_CASE(two_honest_reruns_pass_a_10_percent_gate) {
  const auto r = run_cli({"diff", "--fail-if-slower", "10", cli_test::pipeline_profile_a(),
                          cli_test::pipeline_profile_b()});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(r.exit_code == 0, r.out << r.err);
}

BOOST_AUTO_TEST_CASE(doubling_one_region_trips_a_5_percent_gate) {
  const std::string& a = cli_test::pipeline_profile_a();
  // A copy of A with aot_module:parser's CPU time doubled in every run, the run totals grown to match.
  json::value copy = json::parse(read_file(a));
  for (json::value& run : copy.at("runs").as_array()) {
    double added = 0;
    for (json::value& region : run.at("regions").as_array()) {
      if (region.at("region_id").as_string() != "aot_module:parser") continue;
      const double cpu = region.at("cpu_time_us").to_number<double>();
      region.as_object()["cpu_time_us"] = 2 * cpu;
      added += cpu;
    }
    json::object& timing = run.at("timing").as_object();
    timing["cpu_time_us"] = timing.at("cpu_time_us").to_number<double>() + added;
    timing["wall_time_us"] = timing.at("wall_time_us").to_number<double>() + added;
  }
  const std::string slower = temp_path("parser_doubled.json");
  std::ofstream(slower) << json::serialize(copy);

  const std::string out_json = temp_path("doubled_diff.json");
  const auto r = run_cli({"diff", "--fail-if-slower", "5", "-o", out_json, "--markdown", temp_path("d.md"), a, slower});
  BOOST_TEST(r.exit_code == 3, r.err);
  BOOST_TEST(contains(r.err, "slower than"), r.err);
  const json::value diff = json::parse(read_file(out_json));
  BOOST_TEST(diff.at("gate_failed").as_bool());
  const json::object& cpu = region_domains(diff, "aot_module:parser").at("cpu_time_us").as_object();
  BOOST_TEST(cpu.at("verdict").as_string() == "slower");
  BOOST_TEST(cpu.at("gate_failed").as_bool());
  BOOST_TEST(cpu.at("change_pct").to_number<double>() == 100.0, boost::test_tools::tolerance(1e-6));
  // 20 against 20 distinct values: the exact test. When every doubled value lies above every original
  // one (no load spike in A), U_B = 400 and p = 2 / C(40, 20) = 2 / 137846528820 = 1.4509e-11.
  BOOST_TEST(cpu.at("p_exact").as_bool());
  const json::array& a_runs = cpu.at("a_runs").as_array();
  const json::array& b_runs = cpu.at("b_runs").as_array();
  double a_max = 0, b_min = 1e300;
  for (const json::value& v : a_runs) a_max = std::max(a_max, v.to_number<double>());
  for (const json::value& v : b_runs) b_min = std::min(b_min, v.to_number<double>());
  if (a_max < b_min) {
    BOOST_TEST(cpu.at("p_value").to_number<double>() == 2.0 / 137846528820.0, boost::test_tools::tolerance(1e-9));
  } else {
    // Load spikes on a shared machine can push a few of A's runs above B's: p is still below alpha.
    BOOST_TEST(cpu.at("p_value").to_number<double>() < 0.01);
  }
  // The other regions did not change.
  BOOST_TEST(region_domains(diff, "untuned_module:reduce").at("cpu_time_us").at("verdict").as_string() == "unchanged");
  // Every run total grew by the run's parser time, so B's median is above A's; whether that is
  // significant depends on the other regions' run-to-run noise.
  const json::object& total = diff.at("run_totals").at("cpu_time_us").as_object();
  BOOST_TEST(total.at("change").to_number<double>() > 0.0);
  BOOST_TEST((total.at("verdict").as_string() == "slower" || total.at("verdict").as_string() == "within noise"));
  // The other way round, B is faster: exit 0; without the gate, exit 0 too.
  BOOST_TEST(run_cli({"diff", "--fail-if-slower", "5", "-o", out_json, slower, a}).exit_code == 0);
  const json::value reverse = json::parse(read_file(out_json));
  BOOST_TEST(region_domains(reverse, "aot_module:parser").at("cpu_time_us").at("verdict").as_string() == "faster");
  BOOST_TEST(run_cli({"diff", "-o", out_json, a, slower}).exit_code == 0);
  // A gate above the change (100 %) passes.
  BOOST_TEST(run_cli({"diff", "--fail-if-slower", "150", "-o", out_json, a, slower}).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(new_and_vanished_regions) {
  json::value copy = json::parse(read_file(cli_test::pipeline_profile_a()));
  for (json::value& run : copy.at("runs").as_array()) {
    for (json::value& region : run.at("regions").as_array()) {
      if (region.at("region_id").as_string() == "aot_module:parser") region.as_object()["region_id"] = "aot_module:lexer";
    }
  }
  for (json::value& region : copy.at("regions").as_array()) {
    if (region.at("id").as_string() == "aot_module:parser") region.as_object()["id"] = "aot_module:lexer";
  }
  const std::string renamed = temp_path("renamed.json");
  std::ofstream(renamed) << json::serialize(copy);
  const auto r = run_cli({"diff", "--fail-if-slower", "1", cli_test::pipeline_profile_a(), renamed});
  BOOST_TEST(r.exit_code == 0, r.err);  // new and vanished regions are never gated
  BOOST_TEST(contains(r.out, "- New in B: `aot_module:lexer`\n"), r.out);
  BOOST_TEST(contains(r.out, "- Vanished from B: `aot_module:parser`\n"), r.out);
  BOOST_TEST(contains(r.out, "`aot_module:lexer` (new)"), r.out);
}

BOOST_AUTO_TEST_CASE(reads_the_reference_modules_profiles) {
  // As the reference module writes it: Python floats, no region_summary, another tool.
  const std::string reference = temp_path("reference.json");
  std::ofstream(reference) << R"({"schema_version": 1, "tool": {"name": "aitune", "version": "0.4"},
    "runs": [{"run_index": 0, "timing": {"wall_time_us": 12.5, "cpu_time_us": 12.0},
              "regions": [{"region_id": "aot_module:a", "calls": 1, "cpu_time_us": 4.0}],
              "residual": {"cpu_time_us": 8.0}},
             {"run_index": 1, "timing": {"wall_time_us": 13.5, "cpu_time_us": 13.0},
              "regions": [{"region_id": "aot_module:a", "calls": 1, "cpu_time_us": 5.0}],
              "residual": {"cpu_time_us": 8.0}}]})";
  const auto r = run_cli({"diff", reference, reference});
  BOOST_TEST(r.exit_code == 0, r.err);
  // Medians of {4, 5} = 4.5.
  BOOST_TEST(contains(r.out, "| `aot_module:a` | cpu_time |"), r.out);
  BOOST_TEST(contains(r.out, "4.500"), r.out);
}

BOOST_AUTO_TEST_CASE(errors_name_the_file) {
  const std::string not_profile = cli_test::data_file("basic.json");  // a Kineto trace, not a profile
  const auto r = run_cli({"diff", cli_test::pipeline_profile_a(), not_profile});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, not_profile), r.err);
  const auto missing = run_cli({"diff", cli_test::pipeline_profile_a(), "/nonexistent/b.json"});
  BOOST_TEST(missing.exit_code == 1);
  BOOST_TEST(contains(missing.err, "/nonexistent/b.json"), missing.err);
  // Usage errors: one profile, three, a bad number.
  BOOST_TEST(run_cli({"diff", cli_test::pipeline_profile_a()}).exit_code == 2);
  BOOST_TEST(run_cli({"diff", "a", "b", "c"}).exit_code == 2);
  const auto bad = run_cli({"diff", "--alpha", "2", "a", "b"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(contains(bad.err, "option --alpha"), bad.err);
  BOOST_TEST(run_cli({"diff", "--fail-if-slower", "x", "a", "b"}).exit_code == 2);
  BOOST_TEST(run_cli({"diff", "--help"}).exit_code == 0);
}

BOOST_AUTO_TEST_SUITE_END()
