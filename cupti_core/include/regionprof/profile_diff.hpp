// Comparing two profiles (the one result model; A: the baseline, B: the candidate) region by region and time domain by
// time domain: medians, the change, the two-sided Mann-Whitney U p-value over the per-run values, and a
// verdict (docs/cli.md, "regionprof diff").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/profile.hpp"

namespace regionprof {

/// What the change of one quantity from A to B is (docs/cli.md, "Verdicts"):
/// - `unchanged`: the medians are equal;
/// - `faster` / `slower`: p < alpha and B's median is below / above A's;
/// - `within_noise`: the medians differ but p >= alpha.
enum class diff_verdict : std::uint8_t { unchanged = 0, faster = 1, slower = 2, within_noise = 3 };
/// "unchanged", "faster", "slower", "within noise".
std::string_view to_string(diff_verdict verdict) noexcept;

/// Whether a region is in both profiles, only in B (`added`), or only in A (`vanished`).
enum class diff_presence : std::uint8_t { both = 0, added = 1, vanished = 2 };
/// "both", "new", "vanished".
std::string_view to_string(diff_presence presence) noexcept;

struct diff_options {
  double alpha = 0.01;                    ///< significance level of the U test
  std::optional<double> fail_if_slower;   ///< gate, in percent of A's median
};

/// One quantity (a region's CPU time, a run's wall time, ...) in A and in B. Times in us.
struct diff_entry {
  std::string domain;                    ///< JSON key: `cpu_time_us`, `device_time_us`, `wall_time_us`, ...
  std::vector<double> a_us;              ///< per run of A (0 where the run lacks the region)
  std::vector<double> b_us;
  double a_median_us = 0.0;
  double b_median_us = 0.0;
  double a_mad_us = 0.0;
  double b_mad_us = 0.0;
  double change_us = 0.0;                ///< b_median - a_median
  std::optional<double> change_pct;      ///< 100 * change / a_median; absent when a_median is 0
  double p_value = 1.0;                  ///< two-sided Mann-Whitney U over a_us and b_us
  bool exact = false;                    ///< the exact U distribution (else the normal approximation)
  diff_verdict verdict = diff_verdict::unchanged;
  bool gate_failed = false;              ///< slower by more than fail_if_slower percent (and p < alpha)
};

struct region_diff {
  std::string region_id;
  diff_presence presence = diff_presence::both;
  std::vector<diff_entry> domains;       ///< cpu_time_us, then device_time_us, off_thread_cpu_time_us
};

/// One path of the region tree (`runs[].tree[].path`): its inclusive times, never gated (a nested node's
/// time is inside its topmost region's, which is).
struct tree_path_diff {
  std::vector<std::string> path;         ///< region ids, topmost first
  diff_presence presence = diff_presence::both;
  std::vector<diff_entry> domains;       ///< cpu_time_us, then device_time_us
};

/// The comparison of two profiles.
struct profile_diff {
  std::string a_file;
  std::string b_file;
  std::size_t a_runs = 0;
  std::size_t b_runs = 0;
  diff_options options;
  std::vector<diff_entry> run_totals;    ///< wall_time_us, cpu_time_us, then device_time_us
  std::vector<region_diff> regions;      ///< A's regions in A's order, then B's new ones in B's order
  bool has_tree = false;                 ///< both profiles have a region tree (some run with `tree`)
  /// Every path of either profile's trees, depth-first: a path before its extensions; siblings A's in
  /// first-seen order (runs in order), then B's new ones. Empty without has_tree.
  std::vector<tree_path_diff> tree;
  bool gate_failed = false;              ///< some entry's gate_failed
};

/// Compares `a` (baseline) with `b`. Device domains are compared when both profiles have device data;
/// `off_thread_cpu_time_us` when either has it for the region. The gate applies to regions present in
/// both and to the run totals, never to new or vanished regions (their time shows in the run totals) and
/// never to tree paths. Tree paths are compared when both profiles have a tree, a run without the path
/// counting 0.
///
/// ```
/// const regionprof::named_profile a{"a.json", regionprof::read_profile("a.json")};
/// const regionprof::named_profile b{"b.json", regionprof::read_profile("b.json")};
/// auto diff = regionprof::diff_profiles(a, b, {.alpha = 0.01, .fail_if_slower = 5.0});
/// return diff.gate_failed ? 3 : 0;
/// ```
profile_diff diff_profiles(const named_profile& a, const named_profile& b, const diff_options& options = {});

/// The diff as JSON (docs/cli.md, "Diff JSON"), one member per line, final newline.
std::string to_json(const profile_diff& diff);
/// The diff as Markdown: run totals, then one table of every region and domain, new and vanished regions,
/// then (with has_tree) the region tree's paths the same way.
std::string to_markdown(const profile_diff& diff);
/// A tree path as the views show it: `a > b > c`.
std::string path_text(const std::vector<std::string>& path);
/// The diff as one self-contained HTML page (inline CSS, SVG and script; nothing fetched): A against B per
/// region, each run a dot, the median a bar.
std::string to_html(const profile_diff& diff);

}  // namespace regionprof
