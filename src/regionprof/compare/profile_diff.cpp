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

/// Which memory figure a memory domain compares (rule 21).
enum class memory_figure : std::uint8_t { allocated_bytes = 0, peak_allocated_bytes = 1 };

/// One value per run of the region's memory figure on `device` (0 where absent), in bytes. `region`: an
/// index into result.regions, or npos.
std::vector<double> per_run_memory(const analysis_result& result, std::size_t region, memory_device device,
                                   memory_figure figure) {
  std::vector<double> values;
  values.reserve(result.runs.size());
  for (const run_result& run : result.runs) {
    std::int64_t bytes = 0;
    for (const region_aggregate& a : run.regions) {
      const memory_figures* figures = a.region == region ? memory_of(result, a.memory) : nullptr;
      if (figures == nullptr) continue;
      for (const device_memory& d : *figures) {
        if (d.device != device) continue;
        bytes += figure == memory_figure::allocated_bytes ? static_cast<std::int64_t>(d.allocated_bytes)
                                                          : d.peak_allocated_bytes.value_or(0);
      }
    }
    values.push_back(static_cast<double>(bytes));
  }
  return values;
}

/// The memory devices of `region` (npos: none) in `result`, and on which of them some run has a peak.
void memory_devices(const analysis_result& result, std::size_t region, std::map<memory_device, bool>& devices) {
  for (const run_result& run : result.runs) {
    for (const region_aggregate& a : run.regions) {
      const memory_figures* figures = a.region == region ? memory_of(result, a.memory) : nullptr;
      if (figures == nullptr) continue;
      for (const device_memory& d : *figures) {
        devices[d.device] = devices[d.device] || d.peak_allocated_bytes.has_value();
      }
    }
  }
}

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
  entry.a_values = joined(a);
  entry.b_values = joined(b);
  entry.a_process_medians = process_medians(a);
  entry.b_process_medians = process_medians(b);
  const bool processes = test == diff_test::student_t_log_process_medians;
  const stats::summary sa = stats::summarize(processes ? entry.a_process_medians : entry.a_values);
  const stats::summary sb = stats::summarize(processes ? entry.b_process_medians : entry.b_values);
  entry.a_median = sa.median;
  entry.b_median = sb.median;
  entry.a_mad = sa.mad;
  entry.b_mad = sb.mad;
  entry.change = sb.median - sa.median;
  if (sa.median != 0.0) entry.change_pct = 100.0 * entry.change / sa.median;
  if (processes) {
    const auto [la, lb] = test_scale(entry.a_process_medians, entry.b_process_medians);
    const stats::t_test_result t = stats::student_t(la, lb);
    entry.p_value = t.p_value;
    const bool agree = (t.t > 0.0) == (entry.change > 0.0) && t.t != 0.0;
    entry.p_one_sided = agree ? t.p_value / 2.0 : 1.0 - t.p_value / 2.0;
  } else {
    const stats::mann_whitney_result u = stats::mann_whitney_u(entry.a_values, entry.b_values);
    entry.p_value = u.p_value;
    entry.exact = u.exact;
  }
  return entry;
}

/// The verdict from p_holm (when set) or p_value, and the gate: fail_if_slower for the times,
/// fail_if_more_memory for the memory domains.
void decide(diff_entry& entry, const diff_options& options, bool gated) {
  const bool memory = is_memory_domain(entry.domain);
  const diff_verdict up = memory ? diff_verdict::more : diff_verdict::slower;
  const double p = entry.p_holm.value_or(entry.p_value);
  if (entry.change == 0.0) {
    entry.verdict = diff_verdict::unchanged;
  } else if (p < *options.alpha) {
    entry.verdict = entry.change > 0.0 ? up : memory ? diff_verdict::less : diff_verdict::faster;
  } else {
    entry.verdict = diff_verdict::within_noise;
  }
  // A growth from 0 (change_pct absent) is beyond any gate.
  const std::optional<double>& limit = memory ? options.fail_if_more_memory : options.fail_if_slower;
  entry.gate_failed =
      gated && limit.has_value() && entry.verdict == up && (!entry.change_pct || *entry.change_pct > *limit);
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
    case diff_verdict::less: return "less";
    case diff_verdict::more: return "more";
  }
  return "unchanged";
}

bool is_memory_domain(std::string_view domain) noexcept {
  return domain.starts_with("allocated_bytes:") || domain.starts_with("peak_allocated_bytes:");
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
    // Rule 21: per memory device of the region in any profile, its allocated bytes and, where some run
    // has one, its peak.
    std::map<memory_device, bool> devices;
    for (std::size_t i = 0; i < a_side.size(); ++i) {
      memory_devices(a_side[i].profile.result(), find_region(a_index[i], id), devices);
    }
    for (std::size_t i = 0; i < b_side.size(); ++i) {
      memory_devices(b_side[i].profile.result(), find_region(b_index[i], id), devices);
    }
    for (const auto& [memory_dev, has_peak] : devices) {
      const memory_device on = memory_dev;
      for (memory_figure figure : {memory_figure::allocated_bytes, memory_figure::peak_allocated_bytes}) {
        if (figure == memory_figure::peak_allocated_bytes && !has_peak) continue;
        const auto bytes = [&](std::span<const named_profile> profiles,
                               const std::vector<std::unordered_map<std::string_view, std::size_t>>& index) {
          side_values out;
          for (std::size_t i = 0; i < profiles.size(); ++i) {
            out.push_back(per_run_memory(profiles[i].profile.result(), find_region(index[i], id), on, figure));
          }
          return out;
        };
        const std::string name =
            (figure == memory_figure::allocated_bytes ? "allocated_bytes:" : "peak_allocated_bytes:") +
            memory_device_key(on);
        region.domains.push_back(compare(name, bytes(a_side, a_index), bytes(b_side, b_index), test));
      }
    }
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

  // The gated entries: the run totals and the time domains of regions in both sides (never tree paths),
  // less those at 0 in every run of both sides (no time to compare: they can never be slower). With
  // fail_if_more_memory, the regions' peaks are a second family of their own, chosen the same way.
  std::vector<diff_entry*> gated;
  std::vector<diff_entry*> gated_memory;
  const auto gate = [](std::vector<diff_entry*>& family, diff_entry& entry) {
    const auto zero = [](double v) { return v == 0.0; };
    if (!std::all_of(entry.a_values.begin(), entry.a_values.end(), zero) ||
        !std::all_of(entry.b_values.begin(), entry.b_values.end(), zero)) {
      family.push_back(&entry);
    }
  };
  const auto memory_gated = [&](const diff_entry& entry) {
    return diff.options.fail_if_more_memory.has_value() && entry.domain.starts_with("peak_allocated_bytes:");
  };
  for (diff_entry& entry : diff.run_totals) gate(gated, entry);
  for (region_diff& region : diff.regions) {
    if (region.presence != diff_presence::both) continue;
    for (diff_entry& entry : region.domains) {
      if (!is_memory_domain(entry.domain)) {
        gate(gated, entry);
      } else if (memory_gated(entry)) {
        gate(gated_memory, entry);
      }
    }
  }
  diff.gated_entries = gated.size();
  diff.gated_memory_entries = gated_memory.size();
  if (test == diff_test::student_t_log_process_medians) {
    for (const std::vector<diff_entry*>* family : {&gated, &gated_memory}) {
      std::vector<double> p;
      for (const diff_entry* entry : *family) p.push_back(entry->p_one_sided.value_or(1.0));
      const std::vector<double> adjusted = stats::holm_adjust(p);
      for (std::size_t i = 0; i < family->size(); ++i) (*family)[i]->p_holm = adjusted[i];
    }
  }
  for (diff_entry& entry : diff.run_totals) decide(entry, diff.options, true);
  for (region_diff& region : diff.regions) {
    for (diff_entry& entry : region.domains) {
      const bool both = region.presence == diff_presence::both;
      decide(entry, diff.options, both && (!is_memory_domain(entry.domain) || memory_gated(entry)));
    }
  }
  for (tree_path_diff& node : diff.tree) {
    // Not gated: a nested node's time is inside its topmost region's, which the regions gate.
    for (diff_entry& entry : node.domains) decide(entry, diff.options, false);
  }
  for (const diff_entry* entry : gated) diff.time_gate_failed = diff.time_gate_failed || entry->gate_failed;
  for (const diff_entry* entry : gated_memory) diff.memory_gate_failed = diff.memory_gate_failed || entry->gate_failed;
  diff.gate_failed = diff.time_gate_failed || diff.memory_gate_failed;
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
