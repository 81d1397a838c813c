// diff_profiles: per region and time domain, A's and B's per-run values, medians, the U test and the
// verdict (regionprof/compare/profile_diff.hpp; rules in docs/cli.md, "Verdicts").
#include "regionprof/compare/profile_diff.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <functional>
#include <map>
#include <unordered_map>
#include <string_view>

#include "regionprof/json/microseconds.hpp"
#include "regionprof/statistics/statistics.hpp"

namespace regionprof {
namespace {


/// One value per run of the region's time in one domain (0 where absent), in us. `region`: an index
/// into result.regions, or npos for a region the profile lacks.
std::vector<double> per_run(const analysis_result& result, std::size_t region,
                            const std::function<std::optional<std::int64_t>(const region_aggregate&)>& pick) {
  std::vector<double> values;
  values.reserve(result.runs.size());
  for (const run_result& run : result.runs) {
    std::int64_t ns = 0;
    for (const region_aggregate& time : run.regions) {
      if (time.region == region) ns += pick(time).value_or(0);
    }
    values.push_back(ns_to_us(ns));
  }
  return values;
}

constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// Region id -> index into result.regions.
std::unordered_map<std::string_view, std::size_t> region_index(const analysis_result& result) {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < result.regions.size(); ++i) index.try_emplace(result.regions[i].id, i);
  return index;
}

std::size_t find_region(const std::unordered_map<std::string_view, std::size_t>& index, const std::string& id) {
  const auto found = index.find(id);
  return found == index.end() ? npos : found->second;
}

bool any_off_thread(const analysis_result& result, std::size_t region) {
  for (const run_result& run : result.runs) {
    for (const region_aggregate& time : run.regions) {
      if (time.region == region && time.off_thread_cpu_time_ns) return true;
    }
  }
  return false;
}

/// One quantity on one side: per process (profile), its per-run values (us).
using side_values = std::vector<std::vector<double>>;

std::vector<double> joined(const side_values& side) {
  std::vector<double> all;
  for (const std::vector<double>& process : side) all.insert(all.end(), process.begin(), process.end());
  return all;
}

std::vector<double> process_medians(const side_values& side) {
  std::vector<double> medians;
  for (const std::vector<double>& process : side) medians.push_back(stats::median(process));
  return medians;
}

/// Rule 17: ln of every value when all are above 0 (process effects are factors), else the values.
std::pair<std::vector<double>, std::vector<double>> test_scale(std::vector<double> a, std::vector<double> b) {
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0.0; });
  };
  if (positive(a) && positive(b)) {
    for (double& x : a) x = std::log(x);
    for (double& x : b) x = std::log(x);
  }
  return {std::move(a), std::move(b)};
}

/// Medians, change and p-value; the verdict and gate come later (decide), once Holm has run.
diff_entry compare(std::string domain, const side_values& a, const side_values& b, diff_test test) {
  diff_entry entry;
  entry.domain = std::move(domain);
  entry.a_us = joined(a);
  entry.b_us = joined(b);
  entry.a_process_medians_us = process_medians(a);
  entry.b_process_medians_us = process_medians(b);
  const bool processes = test == diff_test::student_t_log_process_medians;
  const stats::summary sa = stats::summarize(processes ? entry.a_process_medians_us : entry.a_us);
  const stats::summary sb = stats::summarize(processes ? entry.b_process_medians_us : entry.b_us);
  entry.a_median_us = sa.median;
  entry.b_median_us = sb.median;
  entry.a_mad_us = sa.mad;
  entry.b_mad_us = sb.mad;
  entry.change_us = sb.median - sa.median;
  if (sa.median != 0.0) entry.change_pct = 100.0 * entry.change_us / sa.median;
  if (processes) {
    const auto [la, lb] = test_scale(entry.a_process_medians_us, entry.b_process_medians_us);
    const stats::t_test_result t = stats::student_t(la, lb);
    entry.p_value = t.p_value;
    const bool agree = (t.t > 0.0) == (entry.change_us > 0.0) && t.t != 0.0;
    entry.p_one_sided = agree ? t.p_value / 2.0 : 1.0 - t.p_value / 2.0;
  } else {
    const stats::mann_whitney_result u = stats::mann_whitney_u(entry.a_us, entry.b_us);
    entry.p_value = u.p_value;
    entry.exact = u.exact;
  }
  return entry;
}

/// The verdict from p_holm (when set) or p_value, and the gate.
void decide(diff_entry& entry, const diff_options& options, bool gated) {
  const double p = entry.p_holm.value_or(entry.p_value);
  if (entry.change_us == 0.0) {
    entry.verdict = diff_verdict::unchanged;
  } else if (p < *options.alpha) {
    entry.verdict = entry.change_us < 0.0 ? diff_verdict::faster : diff_verdict::slower;
  } else {
    entry.verdict = diff_verdict::within_noise;
  }
  // A slowdown from 0 (change_pct absent) is beyond any gate.
  entry.gate_failed = gated && options.fail_if_slower.has_value() && entry.verdict == diff_verdict::slower &&
                      (!entry.change_pct || *entry.change_pct > *options.fail_if_slower);
}

std::vector<double> totals(const analysis_result& result, const std::function<std::int64_t(const run_result&)>& pick) {
  std::vector<double> values;
  for (const run_result& run : result.runs) values.push_back(ns_to_us(pick(run)));
  return values;
}

/// The region ids of a tree node's path, topmost first.
std::vector<std::string> path_ids(const analysis_result& result, const run_result& run, std::size_t node) {
  std::vector<std::string> ids;
  for (std::uint32_t region : tree_path(run.tree, node)) ids.push_back(result.tree_regions.at(region).id);
  return ids;
}

/// Per tree path of a profile, its node in each run (nullptr where the run lacks it). A path names at
/// most one node of a run's tree (rule 14). Paths in first-seen order (runs in order, depth-first).
struct tree_index {
  std::map<std::vector<std::string>, std::vector<const tree_node*>> nodes;
  std::vector<std::vector<std::string>> paths;
};

tree_index index_tree(const analysis_result& result) {
  tree_index index;
  for (std::size_t r = 0; r < result.runs.size(); ++r) {
    const run_result& run = result.runs[r];
    for (std::size_t i = 0; i < run.tree.size(); ++i) {
      std::vector<std::string> path = path_ids(result, run, i);
      auto [at, added] = index.nodes.try_emplace(path);
      if (added) index.paths.push_back(std::move(path));
      at->second.resize(result.runs.size(), nullptr);
      at->second[r] = &run.tree[i];
    }
  }
  return index;
}

/// The paths of the indices' trees (A's profiles, then B's), merged depth-first: a path before its
/// extensions, each node's children in first-insertion order.
std::vector<std::vector<std::string>> tree_paths(const std::vector<tree_index>& indices) {
  struct trie_node {
    std::vector<std::string> path;
    std::vector<std::size_t> children;
    std::map<std::string, std::size_t> child_of;
  };
  std::vector<trie_node> nodes(1);  // nodes[0]: above the topmost regions
  for (const tree_index& index : indices) {
    for (const std::vector<std::string>& path : index.paths) {
      std::size_t at = 0;
      for (const std::string& id : path) {
        auto [it, added] = nodes[at].child_of.try_emplace(id, nodes.size());
        if (added) {
          trie_node child{nodes[at].path, {}, {}};
          child.path.push_back(id);
          nodes[at].children.push_back(nodes.size());
          nodes.push_back(std::move(child));
        }
        at = it->second;
      }
    }
  }
  std::vector<std::vector<std::string>> paths;
  std::vector<std::size_t> stack(nodes[0].children.rbegin(), nodes[0].children.rend());
  while (!stack.empty()) {
    const trie_node& node = nodes[stack.back()];
    stack.pop_back();
    paths.push_back(node.path);
    stack.insert(stack.end(), node.children.rbegin(), node.children.rend());
  }
  return paths;
}

/// One value per run of the path's inclusive time in one domain (0 where the run lacks it), in us.
std::vector<double> per_run(const analysis_result& result, const tree_index& index, const std::vector<std::string>& path,
                            const std::function<std::optional<std::int64_t>(const tree_node&)>& pick) {
  std::vector<double> values(result.runs.size(), 0.0);
  const auto found = index.nodes.find(path);
  if (found == index.nodes.end()) return values;
  for (std::size_t r = 0; r < values.size(); ++r) {
    if (found->second[r] != nullptr) values[r] = ns_to_us(pick(*found->second[r]).value_or(0));
  }
  return values;
}

}  // namespace

std::string_view to_string(diff_verdict verdict) noexcept {
  switch (verdict) {
    case diff_verdict::unchanged: return "unchanged";
    case diff_verdict::faster: return "faster";
    case diff_verdict::slower: return "slower";
    case diff_verdict::within_noise: return "within noise";
  }
  return "unchanged";
}

std::string_view to_string(diff_presence presence) noexcept {
  switch (presence) {
    case diff_presence::both: return "both";
    case diff_presence::added: return "new";
    case diff_presence::vanished: return "vanished";
  }
  return "both";
}

namespace {

/// The per-process values of one quantity on a side: `pick` applied to each profile.
template <typename pick_fn>
side_values side(std::span<const named_profile> profiles, const pick_fn& pick) {
  side_values values;
  for (const named_profile& profile : profiles) values.push_back(pick(profile.profile.result()));
  return values;
}

bool all_of(std::span<const named_profile> profiles, bool analysis_result::*flag) {
  return std::all_of(profiles.begin(), profiles.end(),
                     [flag](const named_profile& p) { return p.profile.result().*flag; });
}

std::vector<std::string> files_of(std::span<const named_profile> profiles) {
  std::vector<std::string> files;
  for (const named_profile& profile : profiles) files.push_back(profile.file);
  return files;
}

warning one_process_warning(std::size_t a_processes, std::size_t b_processes) {
  return {warning_code::one_process_per_side, warning_source::core,
          "A has " + std::to_string(a_processes) + " process" + (a_processes == 1 ? "" : "es") + " and B " +
              std::to_string(b_processes) +
              ": the p-values compare runs, and the runs of one process share its placement, clock frequency and "
              "memory layout, so a verdict cannot separate a change from process-to-process noise; profile at "
              "least 3 processes a side (regionprof run --processes 3 -o 'a/prof-%n.json' -- PROGRAM) and diff "
              "the directories"};
}

}  // namespace

profile_diff diff_profiles(std::string a_name, std::span<const named_profile> a_side, std::string b_name,
                           std::span<const named_profile> b_side, const diff_options& options) {
  if (a_side.empty() || b_side.empty()) throw std::invalid_argument("diff_profiles: a side without a profile");
  profile_diff diff;
  diff.a_file = std::move(a_name);
  diff.b_file = std::move(b_name);
  diff.a_profiles = files_of(a_side);
  diff.b_profiles = files_of(b_side);
  for (const named_profile& p : a_side) diff.a_runs += p.profile.result().runs.size();
  for (const named_profile& p : b_side) diff.b_runs += p.profile.result().runs.size();
  diff.test = a_side.size() >= 2 && b_side.size() >= 2 ? diff_test::student_t_log_process_medians
                                                       : diff_test::mann_whitney_u_runs;
  diff.options = options;
  diff.options.alpha = options.alpha.value_or(default_alpha(diff.test));
  if (diff.test == diff_test::mann_whitney_u_runs) diff.warnings.push_back(one_process_warning(a_side.size(), b_side.size()));
  const diff_test test = diff.test;
  const bool device = all_of(a_side, &analysis_result::has_device_data) && all_of(b_side, &analysis_result::has_device_data);

  const auto total = [&](const char* domain, std::int64_t (*pick)(const run_result&)) {
    const auto values = [pick](const analysis_result& r) { return totals(r, pick); };
    diff.run_totals.push_back(compare(domain, side(a_side, values), side(b_side, values), test));
  };
  total("wall_time_us", [](const run_result& r) { return r.wall_time_ns; });
  total("cpu_time_us", [](const run_result& r) { return r.cpu_time_ns; });
  if (device) total("device_time_us", [](const run_result& r) { return r.device_time_ns.value_or(0); });

  // A's regions in the order of A's profiles, then B's new ones in the order of B's.
  std::vector<std::string> ids;
  std::unordered_map<std::string, std::pair<bool, bool>> seen;  // id -> (in some A, in some B)
  for (const auto& [profiles, in_b] : {std::pair{a_side, false}, std::pair{b_side, true}}) {
    for (const named_profile& p : profiles) {
      for (const region_info& region : p.profile.result().regions) {
        auto [at, added] = seen.try_emplace(region.id, false, false);
        if (added) ids.push_back(region.id);
        (in_b ? at->second.second : at->second.first) = true;
      }
    }
  }
  std::vector<std::unordered_map<std::string_view, std::size_t>> a_index, b_index;
  for (const named_profile& p : a_side) a_index.push_back(region_index(p.profile.result()));
  for (const named_profile& p : b_side) b_index.push_back(region_index(p.profile.result()));
  for (const std::string& id : ids) {
    region_diff region;
    region.region_id = id;
    const auto [in_a, in_b] = seen.at(id);
    region.presence = !in_a ? diff_presence::added : in_b ? diff_presence::both : diff_presence::vanished;
    using pick_ns = std::function<std::optional<std::int64_t>(const region_aggregate&)>;
    const auto values = [&id](std::span<const named_profile> profiles,
                              const std::vector<std::unordered_map<std::string_view, std::size_t>>& index,
                              const pick_ns& pick) {
      side_values out;
      for (std::size_t i = 0; i < profiles.size(); ++i) {
        out.push_back(per_run(profiles[i].profile.result(), find_region(index[i], id), pick));
      }
      return out;
    };
    const auto add = [&](const char* domain, const pick_ns& pick) {
      region.domains.push_back(compare(domain, values(a_side, a_index, pick), values(b_side, b_index, pick), test));
    };
    add("cpu_time_us", [](const region_aggregate& t) -> std::optional<std::int64_t> { return t.cpu_time_ns; });
    if (device) add("device_time_us", [](const region_aggregate& t) { return t.device_time_ns; });
    bool off_thread = false;
    for (std::size_t i = 0; i < a_side.size(); ++i) {
      off_thread = off_thread || any_off_thread(a_side[i].profile.result(), find_region(a_index[i], id));
    }
    for (std::size_t i = 0; i < b_side.size(); ++i) {
      off_thread = off_thread || any_off_thread(b_side[i].profile.result(), find_region(b_index[i], id));
    }
    if (off_thread) add("off_thread_cpu_time_us", [](const region_aggregate& t) { return t.off_thread_cpu_time_ns; });
    diff.regions.push_back(std::move(region));
  }

  diff.has_tree = all_of(a_side, &analysis_result::has_region_tree) && all_of(b_side, &analysis_result::has_region_tree);
  if (diff.has_tree) {
    std::vector<tree_index> indices;
    for (const named_profile& p : a_side) indices.push_back(index_tree(p.profile.result()));
    for (const named_profile& p : b_side) indices.push_back(index_tree(p.profile.result()));
    const std::span<const tree_index> a_trees(indices.data(), a_side.size());
    const std::span<const tree_index> b_trees(indices.data() + a_side.size(), b_side.size());
    const auto has_path = [](std::span<const tree_index> trees, const std::vector<std::string>& path) {
      return std::any_of(trees.begin(), trees.end(), [&path](const tree_index& t) { return t.nodes.count(path) != 0; });
    };
    using pick_ns = std::function<std::optional<std::int64_t>(const tree_node&)>;
    for (std::vector<std::string>& path : tree_paths(indices)) {
      tree_path_diff node;
      const bool path_in_a = has_path(a_trees, path);
      const bool path_in_b = has_path(b_trees, path);
      node.presence = !path_in_a ? diff_presence::added : path_in_b ? diff_presence::both : diff_presence::vanished;
      const auto values = [&path](std::span<const named_profile> profiles, std::span<const tree_index> trees,
                                  const pick_ns& pick) {
        side_values out;
        for (std::size_t i = 0; i < profiles.size(); ++i) out.push_back(per_run(profiles[i].profile.result(), trees[i], path, pick));
        return out;
      };
      const auto add = [&](const char* domain, const pick_ns& pick) {
        node.domains.push_back(compare(domain, values(a_side, a_trees, pick), values(b_side, b_trees, pick), test));
      };
      add("cpu_time_us", [](const tree_node& n) -> std::optional<std::int64_t> { return n.cpu_time_ns; });
      if (device) add("device_time_us", [](const tree_node& n) { return n.device_time_ns; });
      node.path = std::move(path);
      diff.tree.push_back(std::move(node));
    }
  }

  // The gated entries: the run totals and the domains of regions in both sides (never tree paths), less
  // those at 0 in every run of both sides (no time to compare: they can never be slower).
  std::vector<diff_entry*> gated;
  const auto gate = [&gated](diff_entry& entry) {
    const auto zero = [](double v) { return v == 0.0; };
    if (!std::all_of(entry.a_us.begin(), entry.a_us.end(), zero) || !std::all_of(entry.b_us.begin(), entry.b_us.end(), zero)) {
      gated.push_back(&entry);
    }
  };
  for (diff_entry& entry : diff.run_totals) gate(entry);
  for (region_diff& region : diff.regions) {
    if (region.presence != diff_presence::both) continue;
    for (diff_entry& entry : region.domains) gate(entry);
  }
  diff.gated_entries = gated.size();
  if (test == diff_test::student_t_log_process_medians) {
    std::vector<double> p;
    for (const diff_entry* entry : gated) p.push_back(entry->p_one_sided.value_or(1.0));
    const std::vector<double> adjusted = stats::holm_adjust(p);
    for (std::size_t i = 0; i < gated.size(); ++i) gated[i]->p_holm = adjusted[i];
  }
  for (diff_entry& entry : diff.run_totals) decide(entry, diff.options, true);
  for (region_diff& region : diff.regions) {
    for (diff_entry& entry : region.domains) decide(entry, diff.options, region.presence == diff_presence::both);
  }
  for (tree_path_diff& node : diff.tree) {
    // Not gated: a nested node's time is inside its topmost region's, which the regions gate.
    for (diff_entry& entry : node.domains) decide(entry, diff.options, false);
  }
  for (const diff_entry* entry : gated) diff.gate_failed = diff.gate_failed || entry->gate_failed;
  return diff;
}

profile_diff diff_profiles(const named_profile& a, const named_profile& b, const diff_options& options) {
  return diff_profiles(a.file, std::span<const named_profile>(&a, 1), b.file, std::span<const named_profile>(&b, 1),
                       options);
}

double default_alpha(diff_test test) noexcept {
  return test == diff_test::student_t_log_process_medians ? 0.05 : 0.01;
}

std::string_view to_string(diff_test test) noexcept {
  switch (test) {
    case diff_test::mann_whitney_u_runs: return "mann_whitney_u_runs";
    case diff_test::student_t_log_process_medians: return "student_t_log_process_medians";
  }
  return "mann_whitney_u_runs";
}

}  // namespace regionprof
