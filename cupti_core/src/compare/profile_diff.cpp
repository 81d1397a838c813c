// diff_profiles: per region and time domain, A's and B's per-run values, medians, the U test and the
// verdict (regionprof/profile_diff.hpp; rules in docs/cli.md, "Verdicts").
#include "regionprof/profile_diff.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "report/report_common.hpp"
#include "statistics/statistics.hpp"

namespace regionprof {
namespace {

using report_detail::us;

bool has_device_data(const saved_profile& profile) {
  return std::any_of(profile.runs.begin(), profile.runs.end(), [](const saved_run& r) { return r.device_ns.has_value(); });
}

/// Region ids in first-seen order: `regions` first, then any id only `runs` name.
std::vector<std::string> region_ids(const saved_profile& profile) {
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const saved_region& region : profile.regions) {
    if (seen.insert(region.id).second) ids.push_back(region.id);
  }
  for (const saved_run& run : profile.runs) {
    for (const saved_region_time& time : run.regions) {
      if (seen.insert(time.region_id).second) ids.push_back(time.region_id);
    }
  }
  return ids;
}

/// One value per run of the region's time in one domain (0 where absent), in us.
std::vector<double> per_run(const saved_profile& profile, const std::string& id,
                            const std::function<std::optional<std::int64_t>(const saved_region_time&)>& pick) {
  std::vector<double> values;
  values.reserve(profile.runs.size());
  for (const saved_run& run : profile.runs) {
    std::int64_t ns = 0;
    for (const saved_region_time& time : run.regions) {
      if (time.region_id == id) ns += pick(time).value_or(0);
    }
    values.push_back(us(ns));
  }
  return values;
}

bool any_off_thread(const saved_profile& profile, const std::string& id) {
  for (const saved_run& run : profile.runs) {
    for (const saved_region_time& time : run.regions) {
      if (time.region_id == id && time.off_thread_cpu_ns) return true;
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

std::vector<double> totals(const saved_profile& profile, const std::function<std::int64_t(const saved_run&)>& pick) {
  std::vector<double> values;
  for (const saved_run& run : profile.runs) values.push_back(us(pick(run)));
  return values;
}

bool has_tree(const saved_profile& profile) {
  return std::any_of(profile.runs.begin(), profile.runs.end(), [](const saved_run& r) { return r.tree.has_value(); });
}

/// The paths of `a`'s then `b`'s trees, merged depth-first: a path before its extensions, each node's
/// children in first-insertion order.
std::vector<std::vector<std::string>> tree_paths(const saved_profile& a, const saved_profile& b) {
  struct trie_node {
    std::vector<std::string> path;
    std::vector<std::size_t> children;
    std::map<std::string, std::size_t> child_of;
  };
  std::vector<trie_node> nodes(1);  // nodes[0]: above the topmost regions
  for (const saved_profile* profile : {&a, &b}) {
    for (const saved_run& run : profile->runs) {
      if (!run.tree) continue;
      for (const saved_tree_node& node : *run.tree) {
        std::size_t at = 0;
        for (const std::string& id : node.path) {
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

/// Per tree path of `profile`, its node in each run (nullptr where the run lacks it). A path names at
/// most one node of a run's tree (rule 14).
using tree_index = std::map<std::vector<std::string>, std::vector<const saved_tree_node*>>;
tree_index index_tree(const saved_profile& profile) {
  tree_index index;
  for (std::size_t r = 0; r < profile.runs.size(); ++r) {
    if (!profile.runs[r].tree) continue;
    for (const saved_tree_node& node : *profile.runs[r].tree) {
      std::vector<const saved_tree_node*>& runs = index[node.path];
      runs.resize(profile.runs.size(), nullptr);
      runs[r] = &node;
    }
  }
  return index;
}

/// One value per run of the path's inclusive time in one domain (0 where the run lacks it), in us.
std::vector<double> per_run(const saved_profile& profile, const tree_index& index, const std::vector<std::string>& path,
                            const std::function<std::optional<std::int64_t>(const saved_tree_node&)>& pick) {
  std::vector<double> values(profile.runs.size(), 0.0);
  const auto found = index.find(path);
  if (found == index.end()) return values;
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

profile_diff diff_profiles(const saved_profile& a, const saved_profile& b, const diff_options& options) {
  profile_diff diff;
  diff.a_file = a.file;
  diff.b_file = b.file;
  diff.a_runs = a.runs.size();
  diff.b_runs = b.runs.size();
  diff.options = options;
  const bool device = has_device_data(a) && has_device_data(b);

  diff.run_totals.push_back(compare("wall_time_us", totals(a, [](const saved_run& r) { return r.wall_ns; }),
                                    totals(b, [](const saved_run& r) { return r.wall_ns; }), options, true));
  diff.run_totals.push_back(compare("cpu_time_us", totals(a, [](const saved_run& r) { return r.cpu_ns; }),
                                    totals(b, [](const saved_run& r) { return r.cpu_ns; }), options, true));
  if (device) {
    const auto pick = [](const saved_run& r) { return r.device_ns.value_or(0); };
    diff.run_totals.push_back(compare("device_time_us", totals(a, pick), totals(b, pick), options, true));
  }

  const std::vector<std::string> a_ids = region_ids(a);
  const std::vector<std::string> b_ids = region_ids(b);
  const std::unordered_set<std::string> in_a(a_ids.begin(), a_ids.end());
  const std::unordered_set<std::string> in_b(b_ids.begin(), b_ids.end());
  std::vector<std::pair<std::string, diff_presence>> ids;
  for (const std::string& id : a_ids) ids.emplace_back(id, in_b.count(id) ? diff_presence::both : diff_presence::vanished);
  for (const std::string& id : b_ids) {
    if (!in_a.count(id)) ids.emplace_back(id, diff_presence::added);
  }
  for (const auto& [id, presence] : ids) {
    region_diff region;
    region.region_id = id;
    region.presence = presence;
    const bool gated = presence == diff_presence::both;
    const auto cpu = [](const saved_region_time& t) -> std::optional<std::int64_t> { return t.cpu_ns; };
    region.domains.push_back(compare("cpu_time_us", per_run(a, id, cpu), per_run(b, id, cpu), options, gated));
    if (device) {
      const auto dev = [](const saved_region_time& t) { return t.device_ns; };
      region.domains.push_back(compare("device_time_us", per_run(a, id, dev), per_run(b, id, dev), options, gated));
    }
    if (any_off_thread(a, id) || any_off_thread(b, id)) {
      const auto off = [](const saved_region_time& t) { return t.off_thread_cpu_ns; };
      region.domains.push_back(
          compare("off_thread_cpu_time_us", per_run(a, id, off), per_run(b, id, off), options, gated));
    }
    diff.regions.push_back(std::move(region));
  }

  diff.has_tree = has_tree(a) && has_tree(b);
  if (diff.has_tree) {
    const tree_index a_index = index_tree(a);
    const tree_index b_index = index_tree(b);
    for (std::vector<std::string>& path : tree_paths(a, b)) {
      tree_path_diff node;
      const bool path_in_a = a_index.count(path) != 0;
      const bool path_in_b = b_index.count(path) != 0;
      node.presence = !path_in_a ? diff_presence::added : path_in_b ? diff_presence::both : diff_presence::vanished;
      // Not gated: a nested node's time is inside its topmost region's, which the regions gate.
      const auto cpu = [](const saved_tree_node& n) -> std::optional<std::int64_t> { return n.cpu_ns; };
      node.domains.push_back(
          compare("cpu_time_us", per_run(a, a_index, path, cpu), per_run(b, b_index, path, cpu), options, false));
      if (device) {
        const auto dev = [](const saved_tree_node& n) { return n.device_ns; };
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
