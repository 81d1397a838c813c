#include "support/reference_attribution.hpp"

#include <algorithm>
#include <optional>

namespace regionprof::test::reference {
namespace {

constexpr std::int64_t none = -1;
constexpr std::int64_t skipped = -2;  // a run code: the marker is one of the first skip_runs

/// Who owns an interval: a run code (none, skipped or a run) and how.
struct owner {
  std::int64_t run = none;
  bool off_thread = false;  ///< through another thread's marker interval (rule 9)
  std::int64_t boundary = none;  ///< on-thread: the run's marker; off-thread: the subtree's root
};

}  // namespace

rules default_rules() {
  rules r;
  r.run_marker = std::regex(R"(regionprof\.profiled_run)");
  r.run_marker_domain = "regionprof";
  r.regions = {{std::regex(R"((aot_module:[\s\S]*))"), ""}, {std::regex(R"((untuned_module:[\s\S]*))"), ""}};
  return r;
}

result attribute(const trace& t, const rules& r) {
  const std::size_t n = t.intervals.size();
  const auto& iv = t.intervals;
  auto eff_end = [&](std::size_t i) { return std::max(iv[i].start_ns, iv[i].end_ns); };
  result out;

  // Names -> marker or region id; API calls are neither, a marker is no region.
  std::vector<bool> marker(n, false);
  std::vector<std::optional<std::string>> region(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (is_api_call(iv[i].kind)) continue;
    const std::string name(t.strings.view(iv[i].name));
    if (std::regex_match(name, r.run_marker) &&
        (r.run_marker_domain.empty() || t.strings.view(t.domains[iv[i].domain]) == r.run_marker_domain)) {
      marker[i] = true;
      continue;
    }
    for (const region_rule& rule : r.regions) {
      std::smatch m;
      if (std::regex_match(name, m, rule.pattern)) {
        const std::string id = m.size() > 1 ? (m[1].matched ? m[1].str() : std::string()) : name;
        region[i] = rule.kind.empty() ? id : rule.kind + ":" + id;
        break;
      }
    }
  }

  // Rule 1: sort each thread's intervals (start, then effective end descending, then input order); each
  // interval's parent is the latest earlier one still open at its start (ends after it, or at it when the
  // interval has zero length); an interval ending after its parent is clipped to it.
  std::vector<std::int64_t> parent(n, none);
  std::vector<std::int64_t> end(n);
  std::vector<std::size_t> position(n);
  std::vector<std::size_t> walk;  // every interval, thread by thread, each in sorted order
  std::map<std::uint32_t, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < n; ++i) by_thread[iv[i].thread].push_back(i);
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
      if (iv[a].start_ns != iv[b].start_ns) return iv[a].start_ns < iv[b].start_ns;
      if (eff_end(a) != eff_end(b)) return eff_end(a) > eff_end(b);
      return a < b;
    });
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::size_t b = list[k];
      position[b] = k;
      const std::int64_t s = iv[b].start_ns;
      std::int64_t e = eff_end(b);
      for (std::size_t j = k; j-- > 0;) {
        const std::size_t a = list[j];
        if (end[a] > s || (end[a] == s && e == s)) {
          parent[b] = static_cast<std::int64_t>(a);
          break;
        }
      }
      if (parent[b] != none && e > end[static_cast<std::size_t>(parent[b])]) {
        e = end[static_cast<std::size_t>(parent[b])];
        ++out.overlaps;
      }
      end[b] = e;
      walk.push_back(b);
    }
  }
  auto chain = [&](std::size_t i) {  // self first, root last
    std::vector<std::size_t> c;
    for (std::int64_t x = static_cast<std::int64_t>(i); x != none; x = parent[static_cast<std::size_t>(x)]) {
      c.push_back(static_cast<std::size_t>(x));
    }
    return c;
  };

  // Rule 2: topmost markers in time order (then thread, then sorted position); the first skip_runs are
  // skipped.
  std::vector<std::size_t> markers;
  for (std::size_t i = 0; i < n; ++i) {
    if (!marker[i]) continue;
    const auto c = chain(i);
    if (std::any_of(c.begin() + 1, c.end(), [&](std::size_t x) { return marker[x]; })) {
      ++out.nested_markers;
    } else {
      markers.push_back(i);
    }
  }
  std::sort(markers.begin(), markers.end(), [&](std::size_t a, std::size_t b) {
    if (iv[a].start_ns != iv[b].start_ns) return iv[a].start_ns < iv[b].start_ns;
    if (iv[a].thread != iv[b].thread) return iv[a].thread < iv[b].thread;
    return position[a] < position[b];
  });
  std::map<std::size_t, std::int64_t> run_of_marker;
  std::vector<std::size_t> marker_of_run;
  for (std::size_t k = 0; k < markers.size(); ++k) {
    if (k < r.skip_runs) {
      run_of_marker[markers[k]] = skipped;
      continue;
    }
    run_of_marker[markers[k]] = static_cast<std::int64_t>(k - r.skip_runs);
    marker_of_run.push_back(markers[k]);
    run_figures run;
    run.cpu_ns = end[markers[k]] - iv[markers[k]].start_ns;
    out.runs.push_back(run);
  }

  // Rule 9's lookup: the run code of the latest-starting marker (the last in time order) on another
  // thread whose closed interval holds the start of x.
  auto other_thread_run = [&](std::size_t x) {
    std::int64_t found = none;
    for (std::size_t m : markers) {
      if (iv[m].thread != iv[x].thread && iv[m].start_ns <= iv[x].start_ns && iv[x].start_ns <= end[m]) {
        found = run_of_marker[m];
      }
    }
    return found;
  };
  // The run of every interval: its topmost marker's; else that of the root-most interval of its chain
  // found inside another thread's marker interval.
  std::vector<owner> owners(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = chain(i);
    std::int64_t top_marker = none;
    for (std::size_t x : c) {
      if (marker[x]) top_marker = static_cast<std::int64_t>(x);
    }
    if (top_marker != none) {
      owners[i] = {run_of_marker[static_cast<std::size_t>(top_marker)], false, top_marker};
      continue;
    }
    for (std::size_t k = c.size(); k-- > 0;) {
      const std::int64_t code = other_thread_run(c[k]);
      if (code != none) {
        owners[i] = {code, code != skipped, static_cast<std::int64_t>(c[k])};
        break;
      }
    }
  }
  auto on_thread_run = [&](std::size_t i) { return owners[i].run >= 0 && !owners[i].off_thread ? owners[i].run : none; };
  auto attributed_run = [&](std::size_t i) {
    return owners[i].run >= 0 && (!owners[i].off_thread || r.cross_thread) ? owners[i].run : none;
  };
  // The root-most region between i (included) and the boundary: the run's marker (excluded) on the
  // marker's thread, the off-thread subtree's root (included) elsewhere; none when i is in no run.
  auto owning_region = [&](std::size_t i) {
    std::int64_t found = none;
    if (owners[i].run == none) return found;
    for (std::size_t x : chain(i)) {
      if (!owners[i].off_thread && static_cast<std::int64_t>(x) == owners[i].boundary) break;
      if (region[x]) found = static_cast<std::int64_t>(x);
      if (owners[i].off_thread && static_cast<std::int64_t>(x) == owners[i].boundary) break;
    }
    return found;
  };

  // Rules 3-5, 8 and 9: topmost region instances.
  for (std::size_t i = 0; i < n; ++i) {
    if (owners[i].off_thread) ++out.off_thread_intervals;
    if (!region[i]) continue;
    if (owners[i].run == none) {
      ++out.unmapped;
      continue;
    }
    const std::int64_t run = attributed_run(i);
    if (run == none || owning_region(i) != static_cast<std::int64_t>(i)) continue;
    region_figures& f = out.runs[static_cast<std::size_t>(run)].regions[*region[i]];
    const std::int64_t duration = end[i] - iv[i].start_ns;
    if (owners[i].off_thread) {
      f.off_thread_cpu_ns += duration;
      f.seen_off_thread = true;
    } else {
      ++f.calls;
      f.cpu_ns += duration;
      f.first_seen_ns = std::min(f.first_seen_ns, iv[i].start_ns);
    }
  }

  // Rule 14: the regions on i's chain inside its run (below the run's marker; off-thread, up to and
  // including the subtree's root), topmost first.
  auto region_path = [&](std::size_t i) {
    std::vector<std::string> path;
    for (std::size_t x : chain(i)) {
      if (!owners[i].off_thread && static_cast<std::int64_t>(x) == owners[i].boundary) break;
      if (region[x]) path.push_back(*region[x]);
      if (owners[i].off_thread && static_cast<std::int64_t>(x) == owners[i].boundary) break;
    }
    std::reverse(path.begin(), path.end());
    return path;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t run = attributed_run(i);
    if (!region[i] || run == none) continue;
    tree_figures& node = out.runs[static_cast<std::size_t>(run)].tree[region_path(i)];
    if (owners[i].off_thread) continue;  // an off-thread instance adds a node, no calls, no CPU time
    ++node.calls;
    node.cpu_ns += end[i] - iv[i].start_ns;
  }

  // Rule 20: who owns an on-thread interval's op rows: its owning region's id, or the residual.
  auto owner_of = [&](std::size_t i) {
    const std::int64_t found = owning_region(i);
    return found == none ? std::string(residual_owner) : *region[static_cast<std::size_t>(found)];
  };

  // Rule 6: each op to its launching call (the first API call with its correlation id, by scanning every
  // interval), to that call's run and owning region. An off-thread launch outside any off-thread region
  // goes to the topmost region open at its start on the marker's thread.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> run_ops(out.runs.size());
  std::vector<std::int64_t> call_of(t.device_ops.size(), none);
  for (std::size_t o = 0; o < t.device_ops.size(); ++o) {
    const device_op& op = t.device_ops[o];
    for (std::size_t i = 0; i < n && op.correlation_id != 0; ++i) {
      if (is_api_call(iv[i].kind) && iv[i].correlation_id == op.correlation_id) {
        call_of[o] = static_cast<std::int64_t>(i);
        break;
      }
    }
    if (call_of[o] == none) {
      ++out.uncorrelated;
      continue;
    }
    const std::size_t call = static_cast<std::size_t>(call_of[o]);
    if (op.start_ns < iv[call].start_ns) ++out.anomalies;
    if (owners[call].off_thread) ++out.off_thread_ops;
    const std::int64_t run_index = attributed_run(call);
    if (run_index == none) continue;
    const std::int64_t d = std::max<std::int64_t>(0, op.end_ns - op.start_ns);
    run_figures& run = out.runs[static_cast<std::size_t>(run_index)];
    run.device_ns += d;
    run_ops[static_cast<std::size_t>(run_index)].emplace_back(op.start_ns, op.start_ns + d);
    std::int64_t owner_region = owning_region(call);
    if (owner_region == none && owners[call].off_thread) {
      const std::size_t m = marker_of_run[static_cast<std::size_t>(run_index)];
      for (std::size_t i : walk) {
        if (iv[i].thread == iv[m].thread && on_thread_run(i) == run_index && region[i] &&
            owning_region(i) == static_cast<std::int64_t>(i) && iv[i].start_ns <= iv[call].start_ns &&
            iv[call].start_ns <= end[i]) {
          owner_region = static_cast<std::int64_t>(i);
          break;
        }
      }
    }
    if (owner_region != none) run.regions[*region[static_cast<std::size_t>(owner_region)]].device_ns += d;
    // Rule 14: the innermost region open at the launch; off-thread outside any region of its own thread,
    // the innermost region instance open at the call's start on the marker's thread (the last in the walk).
    if (owning_region(call) != none) {
      run.tree[region_path(call)].self_device_ns += d;
    } else if (owners[call].off_thread) {
      const std::size_t m = marker_of_run[static_cast<std::size_t>(run_index)];
      std::int64_t innermost = none;
      for (std::size_t i : walk) {
        if (iv[i].thread == iv[m].thread && on_thread_run(i) == run_index && region[i] &&
            iv[i].start_ns <= iv[call].start_ns && iv[call].start_ns <= end[i]) {
          innermost = static_cast<std::int64_t>(i);
        }
      }
      if (innermost != none) run.tree[region_path(static_cast<std::size_t>(innermost))].self_device_ns += d;
    }
    if (on_thread_run(call) == none) continue;
    const std::pair<std::string, device_type> key{std::string(t.strings.view(op.name)), device_type::cuda};
    for (key_figures* k : {&out.keys[key], &out.region_keys[owner_of(call)][key]}) {
      ++k->count;
      k->self_device += d;
      k->total_device += d;
    }
  }

  // Rule 7: busy time by testing every elementary segment; span; residuals (rule 4).
  for (std::size_t index = 0; index < out.runs.size(); ++index) {
    run_figures& run = out.runs[index];
    const auto& ops = run_ops[index];
    if (!ops.empty()) {
      std::vector<std::int64_t> points;
      std::int64_t first = std::numeric_limits<std::int64_t>::max();
      std::int64_t last = std::numeric_limits<std::int64_t>::min();
      for (const auto& [s, e] : ops) {
        points.push_back(s);
        points.push_back(e);
        first = std::min(first, s);
        last = std::max(last, e);
      }
      std::sort(points.begin(), points.end());
      points.erase(std::unique(points.begin(), points.end()), points.end());
      for (std::size_t p = 0; p + 1 < points.size(); ++p) {
        const bool covered = std::any_of(ops.begin(), ops.end(), [&](const auto& op) {
          return op.first <= points[p] && points[p + 1] <= op.second;
        });
        if (covered) run.busy_ns += points[p + 1] - points[p];
      }
      run.span_ns = last - first;
    }
    std::int64_t cpu = 0;
    std::int64_t device = 0;
    for (const auto& [id, f] : run.regions) {
      cpu += f.cpu_ns;
      device += f.device_ns;
    }
    run.residual_cpu_ns = std::max<std::int64_t>(0, run.cpu_ns - cpu);
    for (auto& [path, node] : run.tree) {
      node.self_cpu_ns = node.cpu_ns;
      node.device_ns = 0;
      for (const auto& [other, o] : run.tree) {
        const bool below = other.size() >= path.size() && std::equal(path.begin(), path.end(), other.begin());
        if (below) node.device_ns += o.self_device_ns;
        if (below && other.size() == path.size() + 1) node.self_cpu_ns -= o.cpu_ns;
      }
    }
    run.residual_device_ns = std::max<std::int64_t>(0, run.device_ns - device);
  }

  // Rule 10 over the on-thread intervals of each run; rule 20 the same per owner, for every interval but
  // the run's marker and the region instances.
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t run = on_thread_run(i);
    if (run == none) continue;
    key_figures figures;
    key_figures& k = figures;
    const std::int64_t d = end[i] - iv[i].start_ns;
    ++k.count;
    k.total_cpu += d;
    k.self_cpu += d;
    for (std::size_t c = 0; c < n; ++c) {
      if (parent[c] == static_cast<std::int64_t>(i) && on_thread_run(c) == run) k.self_cpu -= end[c] - iv[c].start_ns;
    }
    for (std::size_t o = 0; o < t.device_ops.size(); ++o) {
      if (call_of[o] == none || on_thread_run(static_cast<std::size_t>(call_of[o])) != run) continue;
      const std::int64_t d_op = std::max<std::int64_t>(0, t.device_ops[o].end_ns - t.device_ops[o].start_ns);
      // Ancestors in another run (above a nested run's marker) do not count the op.
      bool in_subtree = false;
      for (std::size_t x : chain(static_cast<std::size_t>(call_of[o]))) {
        if (on_thread_run(x) != run) break;
        in_subtree = in_subtree || x == i;
      }
      if (in_subtree) k.total_device += d_op;
      if (static_cast<std::int64_t>(i) == call_of[o]) k.self_device += d_op;
    }
    std::vector<key_figures*> targets{&out.keys[{std::string(t.strings.view(iv[i].name)), device_type::cpu}]};
    if (!region[i] && static_cast<std::int64_t>(i) != owners[i].boundary) {
      targets.push_back(&out.region_keys[owner_of(i)][{std::string(t.strings.view(iv[i].name)), device_type::cpu}]);
    }
    for (key_figures* target : targets) {
      target->count += figures.count;
      target->self_cpu += figures.self_cpu;
      target->total_cpu += figures.total_cpu;
      target->self_device += figures.self_device;
      target->total_device += figures.total_device;
    }
  }
  return out;
}

}  // namespace regionprof::test::reference
