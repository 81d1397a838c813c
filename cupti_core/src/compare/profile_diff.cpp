// diff_profiles: per region and time domain, A's and B's per-run values, medians, the U test and the
// verdict (regionprof/profile_diff.hpp; rules in docs/cli.md, "Verdicts").
#include "regionprof/profile_diff.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <string_view>

#include "report/report_common.hpp"
#include "statistics/statistics.hpp"

namespace regionprof {
namespace {

using report_detail::us;

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
    values.push_back(us(ns));
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

diff_entry compare(std::string domain, std::vector<double> a, std::vector<double> b, const diff_options& options,
                   bool gated) {
  diff_entry entry;
  entry.domain = std::move(domain);
  const stats::summary sa = stats::summarize(a);
  const stats::summary sb = stats::summarize(b);
  entry.a_median_us = sa.median;
  entry.b_median_us = sb.median;
  entry.a_mad_us = sa.mad;
  entry.b_mad_us = sb.mad;
  entry.change_us = sb.median - sa.median;
  if (sa.median != 0.0) entry.change_pct = 100.0 * entry.change_us / sa.median;
  const stats::mann_whitney_result test = stats::mann_whitney_u(a, b);
  entry.p_value = test.p_value;
  entry.exact = test.exact;
  if (entry.change_us == 0.0) {
    entry.verdict = diff_verdict::unchanged;
  } else if (entry.p_value < options.alpha) {
    entry.verdict = entry.change_us < 0.0 ? diff_verdict::faster : diff_verdict::slower;
  } else {
    entry.verdict = diff_verdict::within_noise;
  }
  // A slowdown from 0 (change_pct absent) is beyond any gate.
  entry.gate_failed = gated && options.fail_if_slower.has_value() && entry.verdict == diff_verdict::slower &&
                      (!entry.change_pct || *entry.change_pct > *options.fail_if_slower);
  entry.a_us = std::move(a);
  entry.b_us = std::move(b);
  return entry;
}

std::vector<double> totals(const analysis_result& result, const std::function<std::int64_t(const run_result&)>& pick) {
  std::vector<double> values;
  for (const run_result& run : result.runs) values.push_back(us(pick(run)));
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

/// The paths of `a`'s then `b`'s trees, merged depth-first: a path before its extensions, each node's
/// children in first-insertion order.
std::vector<std::vector<std::string>> tree_paths(const tree_index& a, const tree_index& b) {
  struct trie_node {
    std::vector<std::string> path;
    std::vector<std::size_t> children;
    std::map<std::string, std::size_t> child_of;
  };
  std::vector<trie_node> nodes(1);  // nodes[0]: above the topmost regions
  for (const tree_index* index : {&a, &b}) {
    for (const std::vector<std::string>& path : index->paths) {
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
    if (found->second[r] != nullptr) values[r] = us(pick(*found->second[r]).value_or(0));
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

profile_diff diff_profiles(const named_profile& a_file, const named_profile& b_file, const diff_options& options) {
  const analysis_result& a = a_file.profile.result();
  const analysis_result& b = b_file.profile.result();
  profile_diff diff;
  diff.a_file = a_file.file;
  diff.b_file = b_file.file;
  diff.a_runs = a.runs.size();
  diff.b_runs = b.runs.size();
  diff.options = options;
  const bool device = a.has_device_data && b.has_device_data;

  diff.run_totals.push_back(compare("wall_time_us", totals(a, [](const run_result& r) { return r.wall_time_ns; }),
                                    totals(b, [](const run_result& r) { return r.wall_time_ns; }), options, true));
  diff.run_totals.push_back(compare("cpu_time_us", totals(a, [](const run_result& r) { return r.cpu_time_ns; }),
                                    totals(b, [](const run_result& r) { return r.cpu_time_ns; }), options, true));
  if (device) {
    const auto pick = [](const run_result& r) { return r.device_time_ns.value_or(0); };
    diff.run_totals.push_back(compare("device_time_us", totals(a, pick), totals(b, pick), options, true));
  }

  // A's regions in A's order, then B's new ones in B's order.
  const auto in_a = region_index(a);
  const auto in_b = region_index(b);
  std::vector<std::pair<std::string, diff_presence>> ids;
  for (const region_info& region : a.regions) {
    ids.emplace_back(region.id, in_b.count(region.id) ? diff_presence::both : diff_presence::vanished);
  }
  for (const region_info& region : b.regions) {
    if (!in_a.count(region.id)) ids.emplace_back(region.id, diff_presence::added);
  }
  for (const auto& [id, presence] : ids) {
    region_diff region;
    region.region_id = id;
    region.presence = presence;
    const bool gated = presence == diff_presence::both;
    const std::size_t at_a = find_region(in_a, id);
    const std::size_t at_b = find_region(in_b, id);
    const auto cpu = [](const region_aggregate& t) -> std::optional<std::int64_t> { return t.cpu_time_ns; };
    region.domains.push_back(compare("cpu_time_us", per_run(a, at_a, cpu), per_run(b, at_b, cpu), options, gated));
    if (device) {
      const auto dev = [](const region_aggregate& t) { return t.device_time_ns; };
      region.domains.push_back(compare("device_time_us", per_run(a, at_a, dev), per_run(b, at_b, dev), options, gated));
    }
    if (any_off_thread(a, at_a) || any_off_thread(b, at_b)) {
      const auto off = [](const region_aggregate& t) { return t.off_thread_cpu_time_ns; };
      region.domains.push_back(
          compare("off_thread_cpu_time_us", per_run(a, at_a, off), per_run(b, at_b, off), options, gated));
    }
    diff.regions.push_back(std::move(region));
  }

  diff.has_tree = a.has_region_tree && b.has_region_tree;
  if (diff.has_tree) {
    const tree_index a_index = index_tree(a);
    const tree_index b_index = index_tree(b);
    for (std::vector<std::string>& path : tree_paths(a_index, b_index)) {
      tree_path_diff node;
      const bool path_in_a = a_index.nodes.count(path) != 0;
      const bool path_in_b = b_index.nodes.count(path) != 0;
      node.presence = !path_in_a ? diff_presence::added : path_in_b ? diff_presence::both : diff_presence::vanished;
      // Not gated: a nested node's time is inside its topmost region's, which the regions gate.
      const auto cpu = [](const tree_node& n) -> std::optional<std::int64_t> { return n.cpu_time_ns; };
      node.domains.push_back(
          compare("cpu_time_us", per_run(a, a_index, path, cpu), per_run(b, b_index, path, cpu), options, false));
      if (device) {
        const auto dev = [](const tree_node& n) { return n.device_time_ns; };
        node.domains.push_back(
            compare("device_time_us", per_run(a, a_index, path, dev), per_run(b, b_index, path, dev), options, false));
      }
      node.path = std::move(path);
      diff.tree.push_back(std::move(node));
    }
  }

  for (const diff_entry& entry : diff.run_totals) diff.gate_failed = diff.gate_failed || entry.gate_failed;
  for (const region_diff& region : diff.regions) {
    for (const diff_entry& entry : region.domains) diff.gate_failed = diff.gate_failed || entry.gate_failed;
  }
  return diff;
}

}  // namespace regionprof
