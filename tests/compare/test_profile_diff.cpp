// diff_profiles: verdicts, the gate and presence on hand-made profiles (docs/cli.md, "Verdicts").
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/compare/profile_diff.hpp"
#include "regionprof/report/report.hpp"
#include "support/report_fixtures.hpp"

using namespace regionprof;
namespace tt = boost::test_tools;

namespace {

named_profile named(std::string file, analysis_result result) {
  return {std::move(file), Profile(trace{}, analysis_options{}, report_context{}, std::move(result))};
}

/// A profile whose run i has region `id` at cpu_us[i] us and a run total of cpu_us[i] + 100 us.
named_profile profile_of(const std::string& id, const std::vector<double>& cpu_us) {
  analysis_result result;
  result.regions.push_back({id, "", "", "-"});
  for (std::size_t i = 0; i < cpu_us.size(); ++i) {
    run_result run;
    run.run_index = i;
    const auto ns = static_cast<std::int64_t>(std::llround(cpu_us[i] * 1000.0));
    run.cpu_time_ns = run.wall_time_ns = ns + 100'000;
    run.regions.push_back({0, 1, ns, std::nullopt, std::nullopt});
    run.residual_cpu_ns = 100'000;
    result.runs.push_back(run);
  }
  return named(id + ".json", std::move(result));
}

/// A 5-run profile with region `r:a` at a_values[i] (run total a_values[i] + 100 us) and the tree paths
/// `r:a` (a_values[i]) and `r:a > <child>` (us[i]; absent where negative) for each child.
named_profile tree_profile(const std::string& file, const std::vector<double>& a_values,
                           const std::vector<std::pair<std::string, std::vector<double>>>& children) {
  analysis_result result;
  result.regions.push_back({"r:a", "a", "r", "-"});
  result.tree_regions = result.regions;
  for (const auto& [child, us] : children) result.tree_regions.push_back({child, "", "", "-"});
  result.has_region_tree = true;
  const auto ns = [](double us) { return static_cast<std::int64_t>(std::llround(us * 1000.0)); };
  for (std::size_t i = 0; i < a_values.size(); ++i) {
    run_result run;
    run.run_index = i;
    run.cpu_time_ns = run.wall_time_ns = ns(a_values[i]) + 100'000;
    run.regions.push_back({0, 1, ns(a_values[i]), std::nullopt, std::nullopt});
    run.residual_cpu_ns = 100'000;
    run.tree.push_back({0, tree_node::no_parent, 0, 1, ns(a_values[i]), ns(a_values[i]), std::nullopt, std::nullopt});
    for (std::size_t c = 0; c < children.size(); ++c) {
      const std::vector<double>& us = children[c].second;
      if (us[i] < 0) continue;
      run.tree.push_back({static_cast<std::uint32_t>(c + 1), 0, 1, 1, ns(us[i]), ns(us[i]), std::nullopt, std::nullopt});
      run.tree.front().self_cpu_time_ns -= ns(us[i]);
    }
    result.runs.push_back(run);
  }
  return named(file, std::move(result));
}

/// A: r:a {100..140}, r:a > r:c {50..54}, r:a > r:old {10, 10, 10, absent, absent}.
/// B: r:a {200..240}, r:a > r:c {50..54}, r:a > r:new {5 x 5}.
profile_diff tree_diff_of_two_profiles() {
  const named_profile a = tree_profile("a.json", {100, 110, 120, 130, 140},
                                       {{"r:c", {50, 51, 52, 53, 54}}, {"r:old", {10, 10, 10, -1, -1}}});
  const named_profile b = tree_profile("b.json", {200, 210, 220, 230, 240},
                                       {{"r:c", {50, 51, 52, 53, 54}}, {"r:new", {5, 5, 5, 5, 5}}});
  return diff_profiles(a, b, {0.01, 5.0});
}

const diff_entry& region_cpu(const profile_diff& diff) { return diff.regions.at(0).domains.at(0); }

/// A profile whose run i has region `r:a` at 100 us CPU time and on the CPU allocated_bytes 512 (one
/// allocation) and peak_allocated_bytes peaks[i] (rule 21).
named_profile memory_profile(const std::string& file, const std::vector<std::int64_t>& peaks) {
  analysis_result result;
  result.regions.push_back({"r:a", "a", "r", "-"});
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    run_result run;
    run.run_index = i;
    run.cpu_time_ns = run.wall_time_ns = 200'000;
    region_aggregate region{0, 1, 100'000, std::nullopt, std::nullopt};
    region.memory = static_cast<std::uint32_t>(result.memory.size());
    result.memory.push_back({device_memory{cpu_memory, 512, 0, 1, 0, peaks[i]}});
    run.regions.push_back(region);
    run.residual_cpu_ns = 100'000;
    result.runs.push_back(run);
  }
  return named(file, std::move(result));
}

/// The entry of `domain` of the diff's first region.
const diff_entry& region_domain(const profile_diff& diff, const std::string& domain) {
  for (const diff_entry& entry : diff.regions.at(0).domains) {
    if (entry.domain == domain) return entry;
  }
  BOOST_FAIL("no domain " + domain);
  return diff.regions.at(0).domains.at(0);
}

/// One side: per process, a profile of r:x with runs {m - 1, m, m + 1} (median m, run totals m + 100).
std::vector<named_profile> processes_of(const std::vector<double>& medians) {
  std::vector<named_profile> side;
  for (std::size_t i = 0; i < medians.size(); ++i) {
    named_profile p = profile_of("r:x", {medians[i] - 1, medians[i], medians[i] + 1});
    p.file = "prof-" + std::to_string(i) + ".json";
    side.push_back(std::move(p));
  }
  return side;
}

}  // namespace

namespace regionprof {
std::ostream& operator<<(std::ostream& out, diff_verdict verdict) { return out << to_string(verdict); }
std::ostream& operator<<(std::ostream& out, diff_presence presence) { return out << to_string(presence); }
std::ostream& operator<<(std::ostream& out, diff_test test) { return out << to_string(test); }
std::ostream& operator<<(std::ostream& out, warning_code code) { return out << to_string(code); }
}  // namespace regionprof

BOOST_AUTO_TEST_SUITE(profile_diff_verdicts)

BOOST_AUTO_TEST_CASE(slower_beyond_and_within_the_gate) {
  // A {10..14}, B {20..24}: fully separated, 5 + 5 runs: exact p = 2 / C(10, 5) = 2 / 252 = 0.0079 < 0.01.
  // Medians 12 and 22: change +10 us = +83.33 %.
  const named_profile a = profile_of("r:x", {10, 11, 12, 13, 14});
  const named_profile b = profile_of("r:x", {24, 20, 22, 21, 23});
  profile_diff diff = diff_profiles(a, b, {0.01, 50.0});
  const diff_entry& cpu = region_cpu(diff);
  BOOST_TEST(cpu.exact);
  BOOST_TEST(cpu.p_value == 2.0 / 252.0, tt::tolerance(1e-12));
  BOOST_TEST(cpu.a_median == 12.0);
  BOOST_TEST(cpu.b_median == 22.0);
  BOOST_TEST(cpu.change == 10.0);
  BOOST_TEST(*cpu.change_pct == 1000.0 / 12.0, tt::tolerance(1e-12));
  BOOST_TEST(cpu.verdict == diff_verdict::slower);
  BOOST_TEST(cpu.gate_failed);
  BOOST_TEST(diff.gate_failed);
  // Run totals moved by the same amounts: slower too (wall and CPU).
  BOOST_TEST(diff.run_totals.size() == 2u);
  BOOST_TEST(diff.run_totals[1].domain == "cpu_time_us");
  BOOST_TEST(diff.run_totals[1].verdict == diff_verdict::slower);
  // A 90 % gate passes; at alpha 0.005 the same change is within noise; reversed, B is faster.
  BOOST_TEST(!diff_profiles(a, b, {0.01, 90.0}).gate_failed);
  BOOST_TEST(region_cpu(diff_profiles(a, b, {0.005, 50.0})).verdict == diff_verdict::within_noise);
  BOOST_TEST(!diff_profiles(a, b, {0.005, 50.0}).gate_failed);
  const profile_diff reverse = diff_profiles(b, a, {0.01, 0.0});
  BOOST_TEST(region_cpu(reverse).verdict == diff_verdict::faster);
  BOOST_TEST(!reverse.gate_failed);
}

BOOST_AUTO_TEST_CASE(overlapping_samples_are_within_noise) {
  // A {10, 20, 30}, B {11, 21, 31}: U_A = 3, U_B = 6. Over the C(6, 3) = 20 arrangements U takes
  // 0..9 with counts 1 1 2 3 3 3 3 2 1 1, so P(U >= 6) = 7 / 20 and p = 0.7.
  const profile_diff diff = diff_profiles(profile_of("r:x", {10, 20, 30}), profile_of("r:x", {11, 21, 31}), {0.01, 0.0});
  BOOST_TEST(region_cpu(diff).p_value == 0.7, tt::tolerance(1e-12));
  BOOST_TEST(region_cpu(diff).verdict == diff_verdict::within_noise);
  BOOST_TEST(!diff.gate_failed);
}

BOOST_AUTO_TEST_CASE(identical_profiles_are_unchanged) {
  const named_profile a = profile_of("r:x", {10, 11, 12});
  const profile_diff diff = diff_profiles(a, a, {0.01, 0.0});
  BOOST_TEST(region_cpu(diff).verdict == diff_verdict::unchanged);
  BOOST_TEST(region_cpu(diff).p_value == 1.0);
  BOOST_TEST(!diff.gate_failed);
  BOOST_TEST(to_string(diff_verdict::within_noise) == "within noise");
}

BOOST_AUTO_TEST_CASE(new_and_vanished_regions_are_listed_not_gated) {
  const profile_diff diff =
      diff_profiles(profile_of("r:old", {10, 11, 12, 13, 14}), profile_of("r:new", {50, 51, 52, 53, 54}), {0.01, 0.0});
  BOOST_TEST_REQUIRE(diff.regions.size() == 2u);
  BOOST_TEST(diff.regions[0].region_id == "r:old");
  BOOST_TEST(diff.regions[0].presence == diff_presence::vanished);
  BOOST_TEST(diff.regions[1].presence == diff_presence::added);
  BOOST_TEST(!diff.regions[1].domains[0].change_pct.has_value());  // A's median is 0
  BOOST_TEST(diff.regions[1].domains[0].verdict == diff_verdict::slower);
  BOOST_TEST(!diff.regions[1].domains[0].gate_failed);
  // ...but the run totals (110..114 against 150..154 us) carry the slowdown and fail the gate.
  BOOST_TEST(diff.run_totals[1].gate_failed);
  BOOST_TEST(diff.gate_failed);
}

BOOST_AUTO_TEST_CASE(tree_paths_are_compared_depth_first_and_not_gated) {
  const profile_diff diff = tree_diff_of_two_profiles();
  BOOST_TEST(diff.has_tree);
  BOOST_TEST_REQUIRE(diff.tree.size() == 4u);
  // Depth-first: r:a, then its children, A's in A's order, then B's new one.
  BOOST_TEST(diff.tree[0].path == (std::vector<std::string>{"r:a"}));
  BOOST_TEST(diff.tree[1].path == (std::vector<std::string>{"r:a", "r:c"}));
  BOOST_TEST(diff.tree[2].path == (std::vector<std::string>{"r:a", "r:old"}));
  BOOST_TEST(diff.tree[3].path == (std::vector<std::string>{"r:a", "r:new"}));
  BOOST_TEST(diff.tree[0].presence == diff_presence::both);
  BOOST_TEST(diff.tree[1].presence == diff_presence::both);
  BOOST_TEST(diff.tree[2].presence == diff_presence::vanished);
  BOOST_TEST(diff.tree[3].presence == diff_presence::added);
  for (const tree_path_diff& node : diff.tree) BOOST_TEST(node.domains.size() == 1u);  // CPU only

  // r:a: 120 -> 220 us, +100 us = +83.33 %; every B above every A: exact p = 2 / C(10, 5) = 2 / 252.
  const diff_entry& top = diff.tree[0].domains[0];
  BOOST_TEST(top.domain == "cpu_time_us");
  BOOST_TEST(top.a_median == 120.0);
  BOOST_TEST(top.b_median == 220.0);
  BOOST_TEST(top.change == 100.0);
  BOOST_TEST(*top.change_pct == 100.0 * 100.0 / 120.0, tt::tolerance(1e-12));
  BOOST_TEST(top.exact);
  BOOST_TEST(top.p_value == 2.0 / 252.0, tt::tolerance(1e-9));
  BOOST_TEST(top.verdict == diff_verdict::slower);
  // Slower beyond the 5 % gate, yet the tree is not gated; the region r:a (same figures) is.
  BOOST_TEST(!top.gate_failed);
  BOOST_TEST(diff.regions.at(0).domains.at(0).gate_failed);

  // r:a > r:c: the same values in both: unchanged.
  BOOST_TEST(diff.tree[1].domains[0].a_median == 52.0);
  BOOST_TEST(diff.tree[1].domains[0].change == 0.0);
  BOOST_TEST(diff.tree[1].domains[0].verdict == diff_verdict::unchanged);

  // r:a > r:old: A {10, 10, 10, 0, 0} (median 10) against B's five 0s: -10 us = -100 %. Ties: ranks
  // 0 x 7 -> 4, 10 x 3 -> 9; U_A = 3 * 9 + 2 * 4 - 15 = 20; sigma^2 = 25 / 12 (11 - (336 + 24) / 90) =
  // 175 / 12; z = (20 - 12.5 - 0.5) / 3.81881 = 1.83303; p = 2 (1 - Phi(z)) = 0.06680: within noise.
  const diff_entry& old = diff.tree[2].domains[0];
  BOOST_TEST(old.a_median == 10.0);
  BOOST_TEST(old.b_median == 0.0);
  BOOST_TEST(*old.change_pct == -100.0);
  BOOST_TEST(!old.exact);
  BOOST_TEST(old.p_value == 0.06680, tt::tolerance(1e-3));
  BOOST_TEST(old.verdict == diff_verdict::within_noise);

  // r:a > r:new: 0 -> 5 us (no %); U_B = 25, sigma^2 = 25 / 12 (11 - 240 / 90) = 625 / 36,
  // z = 12 / 4.16667 = 2.88, p = 2 (1 - Phi(2.88)) = 0.003976: slower, never gated.
  const diff_entry& added = diff.tree[3].domains[0];
  BOOST_TEST(added.b_median == 5.0);
  BOOST_TEST(!added.change_pct.has_value());
  BOOST_TEST(added.p_value == 0.003976, tt::tolerance(1e-3));
  BOOST_TEST(added.verdict == diff_verdict::slower);
  BOOST_TEST(!added.gate_failed);
}

BOOST_AUTO_TEST_CASE(tree_paths_in_the_json_and_markdown_views) {
  const profile_diff diff = tree_diff_of_two_profiles();
  const std::string markdown = to_markdown(diff);
  BOOST_TEST(markdown.find("## Region tree") > markdown.find("## Regions"));
  BOOST_TEST(markdown.find("| `r:a > r:old` (vanished) | cpu_time") != std::string::npos, markdown);
  BOOST_TEST(markdown.find("- New paths in B: `r:a > r:new`\n") != std::string::npos);
  BOOST_TEST(markdown.find("- Vanished paths from B: `r:a > r:old`\n") != std::string::npos);

  const report_test::json::value json = report_test::parse(to_json(diff));
  const report_test::json::array& tree = json.at("tree").as_array();
  BOOST_TEST_REQUIRE(tree.size() == 4u);
  BOOST_TEST(report_test::str(tree[2].at("path").at(1)) == "r:old");
  BOOST_TEST(report_test::str(tree[2].at("presence")) == "vanished");
  BOOST_TEST(report_test::num(tree[0].at("domains").at("cpu_time_us").at("b_median")) == 220.0);
  BOOST_TEST(report_test::str(tree[0].at("domains").at("cpu_time_us").at("verdict")) == "slower");

  const std::string html = to_html(diff);
  BOOST_TEST(html.find("<code>r:a &gt; r:new</code> (new)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_tree_section_unless_both_profiles_have_a_tree) {
  // The reference module's profiles have no `tree`: profile_of() writes none.
  const named_profile with_tree = tree_profile("t.json", {1, 2, 3, 4, 5}, {});
  const profile_diff diff = diff_profiles(with_tree, profile_of("r:a", {1, 2, 3, 4, 5}));
  BOOST_TEST(!diff.has_tree);
  BOOST_TEST(diff.tree.empty());
  BOOST_TEST(!report_test::parse(to_json(diff)).as_object().contains("tree"));
  BOOST_TEST(to_markdown(diff).find("Region tree") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_processes_a_side_test_per_process_medians_with_holm) {
  // A's processes: medians 100, 110, 120; B's: 200, 220, 240 (each process's runs m - 1, m, m + 1).
  // ln medians: B = A + ln 2, sample variances equal: s^2 = 0.0083161, se = sqrt(2 s^2 / 3) = 0.074459,
  // t = 0.693147 / 0.074459 = 9.3092, df = 4 (Student's, pooled), p = 0.00074098.
  // Run totals (medians 200, 210, 220 against 300, 320, 340): t = 9.2615, df = 4, p = 0.00075579 (wall
  // and CPU). One-sided in the direction of the change (t > 0, B slower): half of each, 0.00037049 and
  // 0.00037790. Holm over the 3 gated entries: 3 x 0.00037049 = 0.0011115; 2 x 0.00037790 = 0.00075579,
  // raised to 0.0011115 to stay monotone; 1 x 0.00037790, raised likewise: all three 0.0011115.
  const std::vector<named_profile> a = processes_of({100, 110, 120});
  const std::vector<named_profile> b = processes_of({200, 220, 240});
  const profile_diff diff = diff_profiles("a", a, "b", b, {std::nullopt, 10.0});
  BOOST_TEST(diff.test == diff_test::student_t_log_process_medians);
  BOOST_TEST(*diff.options.alpha == 0.05);  // the default with several processes a side
  BOOST_TEST(diff.warnings.empty());
  BOOST_TEST(diff.a_runs == 9u);
  BOOST_TEST(diff.a_profiles.size() == 3u);
  BOOST_TEST(diff.gated_entries == 3u);
  const diff_entry& cpu = region_cpu(diff);
  BOOST_TEST(cpu.a_process_medians == (std::vector<double>{100, 110, 120}));
  BOOST_TEST(cpu.a_values.size() == 9u);  // every run, processes in order
  BOOST_TEST(cpu.a_median == 110.0);  // the median of the process medians
  BOOST_TEST(cpu.b_median == 220.0);
  BOOST_TEST(cpu.a_mad == 10.0);
  BOOST_TEST(*cpu.change_pct == 100.0, tt::tolerance(1e-12));
  BOOST_TEST(cpu.p_value == 0.00074098, tt::tolerance(1e-4));
  BOOST_TEST(diff.run_totals[0].p_value == 0.00075579, tt::tolerance(1e-4));
  BOOST_TEST(*cpu.p_one_sided == 0.00037049, tt::tolerance(1e-4));
  for (const diff_entry* entry : {&cpu, &diff.run_totals[0], &diff.run_totals[1]}) {
    BOOST_TEST_REQUIRE(entry->p_holm.has_value());
    BOOST_TEST(*entry->p_holm == 0.0011115, tt::tolerance(1e-4));
    BOOST_TEST(entry->verdict == diff_verdict::slower);
  }
  BOOST_TEST(cpu.gate_failed);
  BOOST_TEST(diff.gate_failed);
  // At alpha 0.001 the one-sided p (0.00037) would pass but Holm's (0.0011) does not: within noise, no gate.
  const profile_diff strict = diff_profiles("a", a, "b", b, {0.001, 10.0});
  BOOST_TEST(region_cpu(strict).verdict == diff_verdict::within_noise);
  BOOST_TEST(!strict.gate_failed);
}

BOOST_AUTO_TEST_CASE(process_offsets_do_not_trip_the_gate) {
  // Honest noise: each process runs at its own speed (A 100, 125, 90; B 120, 95, 130), steady within it.
  // B's median of process medians, 120, is +20 % of A's 100, but the ln medians give t = 0.68039,
  // df = 4, p = 0.53360: within noise.
  const std::vector<named_profile> a = processes_of({100, 125, 90});
  const std::vector<named_profile> b = processes_of({120, 95, 130});
  const profile_diff diff = diff_profiles("a", a, "b", b, {std::nullopt, 10.0});
  const diff_entry& cpu = region_cpu(diff);
  BOOST_TEST(*cpu.change_pct == 20.0, tt::tolerance(1e-12));
  BOOST_TEST(cpu.p_value == 0.53360, tt::tolerance(1e-4));
  BOOST_TEST(*cpu.p_one_sided == 0.53360 / 2, tt::tolerance(1e-4));
  BOOST_TEST(cpu.verdict == diff_verdict::within_noise);
  BOOST_TEST(!diff.gate_failed);
  // The first process of each side alone (100 against 120), 10 runs each: every B run is above every A
  // run, so U's exact p is 2 / C(20, 10) and the gate fails on what is process-to-process noise.
  const named_profile a0 = profile_of("r:x", {99, 99.5, 100, 100.5, 101, 99.2, 99.7, 100.2, 100.7, 100.9});
  const named_profile b0 = profile_of("r:x", {119, 119.5, 120, 120.5, 121, 119.2, 119.7, 120.2, 120.7, 120.9});
  const profile_diff one = diff_profiles(a0, b0, {0.01, 10.0});
  BOOST_TEST(one.test == diff_test::mann_whitney_u_runs);
  BOOST_TEST(*one.options.alpha == 0.01);  // the default with one process a side
  BOOST_TEST(region_cpu(one).p_value == 2.0 / 184756.0, tt::tolerance(1e-9));  // 2 / C(20, 10)
  BOOST_TEST(one.gate_failed);
  BOOST_TEST_REQUIRE(one.warnings.size() == 1u);
  BOOST_TEST(one.warnings[0].code == warning_code::one_process_per_side);
  BOOST_TEST(!region_cpu(one).p_holm.has_value());
}

BOOST_AUTO_TEST_CASE(one_process_per_side_in_every_view) {
  const named_profile a = profile_of("r:x", {10, 11, 12});
  const std::vector<named_profile> b = processes_of({11, 12, 13});
  // 1 against 3: no per-process test is possible on A's side; U over the pooled runs, and the warning.
  const profile_diff diff = diff_profiles("a.json", std::span<const named_profile>(&a, 1), "b", b);
  BOOST_TEST(diff.test == diff_test::mann_whitney_u_runs);
  BOOST_TEST_REQUIRE(diff.warnings.size() == 1u);
  BOOST_TEST(diff.warnings[0].message.starts_with("A has 1 process and B 3: "), diff.warnings[0].message);
  BOOST_TEST(diff.warnings[0].message.find("--processes") != std::string::npos);
  BOOST_TEST(region_cpu(diff).b_values.size() == 9u);

  const report_test::json::value json = report_test::parse(to_json(diff));
  BOOST_TEST(report_test::str(json.at("test")) == "mann_whitney_u_runs");
  BOOST_TEST(report_test::num(json.at("b").at("processes")) == 3.0);
  BOOST_TEST(report_test::str(json.at("b").at("profiles").at(2)) == "prof-2.json");
  BOOST_TEST(report_test::str(json.at("warnings").at(0).at("code")) == "ONE_PROCESS_PER_SIDE");
  BOOST_TEST(report_test::str(json.at("warnings").at(0).at("source")) == "core");
  const std::string markdown = to_markdown(diff);
  BOOST_TEST(markdown.find("- B (candidate): `b`, 3 processes, 9 runs\n") != std::string::npos, markdown);
  BOOST_TEST(markdown.find("## Warnings\n\n- `ONE_PROCESS_PER_SIDE` (core): A has 1 process") != std::string::npos,
             markdown);
  BOOST_TEST(to_html(diff).find("<b>ONE_PROCESS_PER_SIDE</b> (core): A has 1 process") != std::string::npos);

  // Three a side: the t test, p_holm in the JSON, `h` in the p column, no warning.
  const profile_diff three = diff_profiles("a", processes_of({10, 11, 12}), "b", b);
  const report_test::json::value tj = report_test::parse(to_json(three));
  BOOST_TEST(report_test::str(tj.at("test")) == "student_t_log_process_medians");
  BOOST_TEST(tj.at("warnings").as_array().empty());
  BOOST_TEST(tj.at("run_totals").at("cpu_time_us").as_object().contains("p_holm"));
  BOOST_TEST(tj.at("regions").at(0).at("domains").at("cpu_time_us").at("a_process_medians").as_array().size() == 3u);
  BOOST_TEST(to_markdown(three).find("Holm-adjusted over the 3 gated entries") != std::string::npos);
  BOOST_TEST(to_markdown(three).find("## Warnings\n\nNone.\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_regions_peak_memory_is_compared_per_device_and_gated) {
  // Peaks 1000..1004 against 2000..2004: B's median 2002 is 99.8 % above A's 1002, exact U p = 2 / 252.
  const named_profile a = memory_profile("a.json", {1000, 1001, 1002, 1003, 1004});
  const named_profile b = memory_profile("b.json", {2000, 2001, 2002, 2003, 2004});
  const profile_diff gated = diff_profiles(a, b, {.alpha = 0.01, .fail_if_more_memory = 10.0});
  const diff_entry& peak = region_domain(gated, "peak_allocated_bytes:cpu");
  BOOST_TEST(peak.a_median == 1002.0);
  BOOST_TEST(peak.b_median == 2002.0);
  BOOST_TEST(peak.change == 1000.0);
  BOOST_TEST(*peak.change_pct == 100.0 * 1000.0 / 1002.0, tt::tolerance(1e-12));
  BOOST_TEST(peak.p_value == 2.0 / 252.0, tt::tolerance(1e-9));
  BOOST_TEST(to_string(peak.verdict) == "more");
  BOOST_TEST(peak.gate_failed);
  const diff_entry& allocated = region_domain(gated, "allocated_bytes:cpu");
  BOOST_TEST(to_string(allocated.verdict) == "unchanged");
  BOOST_TEST(!allocated.gate_failed);
  BOOST_TEST(gated.gated_memory_entries == 1u);
  BOOST_TEST(gated.memory_gate_failed);
  BOOST_TEST(!gated.time_gate_failed);
  BOOST_TEST(gated.gate_failed);
  const std::string markdown = to_markdown(gated);
  BOOST_TEST(markdown.find("## Memory") != std::string::npos, markdown);
  const std::size_t row = markdown.find("| `r:a` | peak_allocated_bytes:cpu |");
  BOOST_TEST_REQUIRE(row != std::string::npos, markdown);
  const std::string line = markdown.substr(row, markdown.find('\n', row) - row);
  BOOST_TEST(line.find(" 1002.000 | ") != std::string::npos, line);
  BOOST_TEST(line.find(" +1000.000 | ") != std::string::npos, line);
  BOOST_TEST(line.find("| more (gate) |") != std::string::npos, line);
  BOOST_TEST(markdown.find("- Memory gate: a region's peak more by more than 10.00 % with p < alpha (1 gated "
                           "entries): FAILED") != std::string::npos,
             markdown);
  BOOST_TEST(to_json(gated).find("\"fail_if_more_memory_pct\": 10") != std::string::npos);

  // A gate above the change passes; no gate: the verdict alone, nothing gated, and the time gate's
  // family is the same as without memory.
  BOOST_TEST(!diff_profiles(a, b, {.alpha = 0.01, .fail_if_more_memory = 150.0}).gate_failed);
  const profile_diff plain = diff_profiles(a, b, {.alpha = 0.01, .fail_if_slower = 5.0});
  BOOST_TEST(to_string(region_domain(plain, "peak_allocated_bytes:cpu").verdict) == "more");
  BOOST_TEST(!region_domain(plain, "peak_allocated_bytes:cpu").gate_failed);
  BOOST_TEST(plain.gated_memory_entries == 0u);
  BOOST_TEST(plain.gated_entries == 3u);  // wall, cpu totals and r:a's cpu_time (all non-zero)
  BOOST_TEST(!plain.gate_failed);
  // Less memory is `less`, never a failure.
  const profile_diff shrunk = diff_profiles(b, a, {.alpha = 0.01, .fail_if_more_memory = 10.0});
  BOOST_TEST(to_string(region_domain(shrunk, "peak_allocated_bytes:cpu").verdict) == "less");
  BOOST_TEST(!shrunk.gate_failed);
}

BOOST_AUTO_TEST_SUITE_END()
