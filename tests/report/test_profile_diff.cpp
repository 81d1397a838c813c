// diff_profiles: verdicts, the gate and presence on hand-made profiles (docs/cli.md, "Verdicts").
#include <cmath>
#include <ostream>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/profile_diff.hpp"

using namespace regionprof;
namespace tt = boost::test_tools;

namespace {

/// A profile whose run i has region `id` at cpu_us[i] us and a run total of cpu_us[i] + 100 us.
saved_profile profile_of(const std::string& id, const std::vector<double>& cpu_us) {
  saved_profile profile;
  profile.file = id + ".json";
  profile.regions.push_back({id, "", "", "-"});
  for (std::size_t i = 0; i < cpu_us.size(); ++i) {
    saved_run run;
    run.run_index = i;
    const auto ns = static_cast<std::int64_t>(std::llround(cpu_us[i] * 1000.0));
    run.cpu_ns = run.wall_ns = ns + 100'000;
    run.regions.push_back({id, 1, ns, std::nullopt, std::nullopt});
    run.residual.cpu_ns = 100'000;
    profile.runs.push_back(run);
  }
  return profile;
}

const diff_entry& region_cpu(const profile_diff& diff) { return diff.regions.at(0).domains.at(0); }

}  // namespace

namespace regionprof {
std::ostream& operator<<(std::ostream& out, diff_verdict verdict) { return out << to_string(verdict); }
std::ostream& operator<<(std::ostream& out, diff_presence presence) { return out << to_string(presence); }
}  // namespace regionprof

BOOST_AUTO_TEST_SUITE(profile_diff_verdicts)

BOOST_AUTO_TEST_CASE(slower_beyond_and_within_the_gate) {
  // A {10..14}, B {20..24}: fully separated, 5 + 5 runs: exact p = 2 / C(10, 5) = 2 / 252 = 0.0079 < 0.01.
  // Medians 12 and 22: change +10 us = +83.33 %.
  const saved_profile a = profile_of("r:x", {10, 11, 12, 13, 14});
  const saved_profile b = profile_of("r:x", {24, 20, 22, 21, 23});
  profile_diff diff = diff_profiles(a, b, {0.01, 50.0});
  const diff_entry& cpu = region_cpu(diff);
  BOOST_TEST(cpu.exact);
  BOOST_TEST(cpu.p_value == 2.0 / 252.0, tt::tolerance(1e-12));
  BOOST_TEST(cpu.a_median_us == 12.0);
  BOOST_TEST(cpu.b_median_us == 22.0);
  BOOST_TEST(cpu.change_us == 10.0);
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
  const saved_profile a = profile_of("r:x", {10, 11, 12});
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

BOOST_AUTO_TEST_SUITE_END()
