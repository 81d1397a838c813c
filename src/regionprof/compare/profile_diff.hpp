// Comparing two sides of profiles (the one result model, one profile per process; A: the baseline, B: the
// candidate) region by region and time domain by time domain: medians, the change, a p-value and a
// verdict (docs/cli.md, "regionprof diff"; docs/design.md, rule 17). One process a side: the two-sided
// Mann-Whitney U test over the per-run values. Two or more a side: Student's t test (pooled variance) over the log of
// each process's median, one-sided in the direction of each change and Holm-adjusted over the gated entries.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/model/profile.hpp"
#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// What the change of one quantity from A to B is (docs/cli.md, "Verdicts"):
/// - `unchanged`: the medians are equal;
/// - `faster` / `slower`: a time, p < alpha and B's median is below / above A's;
/// - `less` / `more`: a memory figure (rule 21), p < alpha and B's median is below / above A's;
/// - `within_noise`: the medians differ but p >= alpha.
enum class diff_verdict : std::uint8_t { unchanged = 0, faster = 1, slower = 2, within_noise = 3, less = 4, more = 5 };
/// "unchanged", "faster", "slower", "within noise", "less", "more".
std::string_view to_string(diff_verdict verdict) noexcept;

/// Whether a region is in both profiles, only in B (`added`), or only in A (`vanished`).
enum class diff_presence : std::uint8_t { both = 0, added = 1, vanished = 2 };
/// "both", "new", "vanished".
std::string_view to_string(diff_presence presence) noexcept;

/// Which test gives the p-values (docs/design.md, rule 17).
enum class diff_test : std::uint8_t {
  /// fewer than 2 processes on a side: U over the per-run values
  mann_whitney_u_runs = 0,
  /// 2 or more a side: Student's t (pooled) over ln(per-process median), one-sided, Holm
  student_t_log_process_medians = 1,
};
/// "mann_whitney_u_runs", "student_t_log_process_medians".
std::string_view to_string(diff_test test) noexcept;
/// The level a diff uses without diff_options::alpha: 0.01 (per entry) for mann_whitney_u_runs, 0.05
/// (family-wise) for student_t_log_process_medians (docs/design.md, rule 17).
double default_alpha(diff_test test) noexcept;

struct diff_options {
  /// Significance level: per entry for mann_whitney_u_runs (default 0.01); family-wise over the gated
  /// entries, per direction, for student_t_log_process_medians (default 0.05: rule 17). diff_profiles
  /// stores the level it used in profile_diff::options.
  // `{}` initializers: `{.alpha = a, .fail_if_more_memory = m}` leaves the others out without
  // -Wmissing-field-initializers.
  std::optional<double> alpha{};
  std::optional<double> fail_if_slower{};   ///< gate, in percent of A's median
  /// Memory gate, in percent of A's median: a region's `peak_allocated_bytes:DEVICE` (rule 21) more by
  /// beyond it, with p < alpha. Its entries are a Holm family of their own.
  std::optional<double> fail_if_more_memory{};
};

/// One quantity (a region's CPU time, a run's wall time, a region's peak memory, ...) in A and in B, in
/// the domain's unit: us for the times (`..._us`), bytes for memory (`allocated_bytes:cpu`,
/// `peak_allocated_bytes:cuda:0`).
struct diff_entry {
  std::string domain;  ///< JSON key: `cpu_time_us`, `device_time_us`, `wall_time_us`, `peak_allocated_bytes:cpu`, ...
  std::vector<double> a_values;  ///< per run of A, processes in order (0 where a run lacks the region)
  std::vector<double> b_values;
  std::vector<double> a_process_medians;  ///< per process (profile) of A, the median of its runs
  std::vector<double> b_process_medians;
  /// The median of A's runs (one process) or of A's per-process medians (several).
  double a_median = 0.0;
  double b_median = 0.0;
  double a_mad = 0.0;     ///< MAD of what a_median is the median of
  double b_mad = 0.0;
  double change = 0.0;    ///< b_median - a_median
  std::optional<double> change_pct;      ///< 100 * change / a_median; absent when a_median is 0
  double p_value = 1.0;                  ///< two-sided, of the diff's test
  bool exact = false;                    ///< U: the exact distribution (else the normal approximation)
  /// student_t_log_process_medians: the one-sided p in the direction of the change (B's median above or
  /// below A's): p_value / 2 when the t statistic has the change's sign, else 1 - p_value / 2.
  std::optional<double> p_one_sided;
  /// Holm-adjusted p_one_sided over the diff's gated entries (student_t_log_process_medians only); the
  /// verdict of a gated entry uses it.
  std::optional<double> p_holm;
  diff_verdict verdict = diff_verdict::unchanged;
  /// Slower by more than fail_if_slower percent, or (a region's peak memory) more by more than
  /// fail_if_more_memory percent, with p < alpha.
  bool gate_failed = false;
};

/// True for the memory domains (`allocated_bytes:...`, `peak_allocated_bytes:...`): bytes, verdicts
/// `less` / `more`.
bool is_memory_domain(std::string_view domain) noexcept;

struct region_diff {
  std::string region_id;
  diff_presence presence = diff_presence::both;
  /// cpu_time_us, then device_time_us, off_thread_cpu_time_us; then per memory device (rule 21; `cpu`
  /// first) `allocated_bytes:DEVICE` and, where some profile has a peak there, `peak_allocated_bytes:DEVICE`.
  std::vector<diff_entry> domains;
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
  std::string a_file;                    ///< A as given: one profile, or a directory of them
  std::string b_file;
  std::vector<std::string> a_profiles;   ///< A's profiles (one per process), in order
  std::vector<std::string> b_profiles;
  std::size_t a_runs = 0;                ///< over all of A's processes
  std::size_t b_runs = 0;
  diff_options options;
  diff_test test = diff_test::mann_whitney_u_runs;
  /// The Holm family's size: run totals and time domains of regions on both sides, less those at 0 in every run.
  std::size_t gated_entries = 0;
  /// The memory gate's Holm family's size (fail_if_more_memory): the regions' peak entries on both sides,
  /// less those at 0 in every run; 0 without the gate.
  std::size_t gated_memory_entries = 0;
  /// The diff's own warnings: ONE_PROCESS_PER_SIDE when a side has a single process.
  std::vector<warning> warnings;
  std::vector<diff_entry> run_totals;    ///< wall_time_us, cpu_time_us, then device_time_us
  std::vector<region_diff> regions;      ///< A's regions in A's order, then B's new ones in B's order
  bool has_tree = false;                 ///< both profiles have a region tree (some run with `tree`)
  /// Every path of either profile's trees, depth-first: a path before its extensions; siblings A's in
  /// first-seen order (runs in order), then B's new ones. Empty without has_tree.
  std::vector<tree_path_diff> tree;
  bool gate_failed = false;              ///< some entry's gate_failed: time_ or memory_gate_failed
  bool time_gate_failed = false;         ///< some time entry's gate_failed (fail_if_slower)
  bool memory_gate_failed = false;       ///< some memory entry's gate_failed (fail_if_more_memory)
};

/// Compares side `a` (baseline, one profile per process) with side `b`, each side's profiles non-empty;
/// `a_name` and `b_name` stand for the sides (a file or a directory). With at least 2 processes on each
/// side the test is student_t_log_process_medians, else mann_whitney_u_runs (the runs of every process of a
/// side pooled) with the warning ONE_PROCESS_PER_SIDE. Regions, domains and tree paths are the union over
/// every profile; device domains need device data in all of them, the tree a tree in all of them.
///
/// ```
/// std::vector<regionprof::named_profile> a, b;
/// for (int i = 0; i < 3; ++i) a.push_back({"a-" + std::to_string(i) + ".json",
///                                          regionprof::read_profile("a-" + std::to_string(i) + ".json")});
/// // ... b likewise
/// auto diff = regionprof::diff_profiles("a/", a, "b/", b, {.alpha = 0.01, .fail_if_slower = 10.0});
/// ```
profile_diff diff_profiles(std::string a_name, std::span<const named_profile> a, std::string b_name,
                           std::span<const named_profile> b, const diff_options& options = {});

/// Compares `a` (baseline) with `b`, one process each. Device domains are compared when both profiles have device data;
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

}  // namespace regionprof
