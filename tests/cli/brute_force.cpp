#include "brute_force.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>

namespace brute {
namespace {

using regionprof::cpu_interval;
using regionprof::trace;

constexpr int none = -1;

struct node {
  int parent = none;
  std::int64_t end = 0;  // clipped
  bool marker = false;
  std::optional<std::string> region;  // region id
  int run = none;
  bool off_thread = false;  // its run came from another thread's marker (rule 9)
  int off_root = none;      // the looked-up root of its off-thread subtree
};

}  // namespace

std::vector<run_figures> attribute(const trace& t, const std::regex& run_marker, const std::vector<region_rule>& rules,
                                   bool cross_thread) {
  const int n = static_cast<int>(t.intervals.size());
  std::vector<node> nodes(static_cast<std::size_t>(n));
  auto at = [&](int i) -> node& { return nodes[static_cast<std::size_t>(i)]; };
  auto iv = [&](int i) -> const cpu_interval& { return t.intervals[static_cast<std::size_t>(i)]; };

  // Names -> marker / region, API calls never.
  for (int i = 0; i < n; ++i) {
    if (regionprof::is_api_call(iv(i).kind)) continue;
    const std::string name(t.strings.view(iv(i).name));
    std::smatch m;
    if (std::regex_match(name, run_marker)) {
      at(i).marker = true;
      continue;
    }
    for (const region_rule& rule : rules) {
      if (std::regex_match(name, m, rule.pattern)) {
        at(i).region = rule.kind + ":" + (m.size() > 1 ? (m[1].matched ? m[1].str() : std::string()) : name);
        break;
      }
    }
  }

  // Rule 1, naively: per thread in (start, end descending, input order); the parent is the latest
  // earlier interval whose clipped span holds the start (a zero-length interval at its end too).
  std::vector<std::vector<int>> by_thread(t.threads.size());
  for (int i = 0; i < n; ++i) by_thread[iv(i).thread].push_back(i);
  std::vector<int> walk;  // every interval, each thread in sorted order
  for (auto& list : by_thread) {
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      if (iv(a).start_ns != iv(b).start_ns) return iv(a).start_ns < iv(b).start_ns;
      return iv(a).end_ns > iv(b).end_ns;
    });
    for (std::size_t k = 0; k < list.size(); ++k) {
      const int b = list[k];
      const std::int64_t start = iv(b).start_ns;
      const std::int64_t end = std::max(iv(b).end_ns, start);
      int parent = none;
      for (std::size_t j = 0; j < k; ++j) {
        const int a = list[j];
        if (iv(a).start_ns <= start && (start < at(a).end || (start == at(a).end && end == start))) parent = a;
      }
      at(b).parent = parent;
      at(b).end = parent != none ? std::min(end, at(parent).end) : end;
      walk.push_back(b);
    }
  }

  auto topmost_marker = [&](int i) {  // the outermost marker among i and its ancestors
    int found = none;
    for (int a = i; a != none; a = at(a).parent) {
      if (at(a).marker) found = a;
    }
    return found;
  };

  // Rule 2: topmost markers, by start, then thread, then walk order.
  std::vector<int> markers;
  for (const int i : walk) {
    if (at(i).marker && topmost_marker(i) == i) markers.push_back(i);
  }
  std::stable_sort(markers.begin(), markers.end(), [&](int a, int b) {
    if (iv(a).start_ns != iv(b).start_ns) return iv(a).start_ns < iv(b).start_ns;
    return iv(a).thread < iv(b).thread;
  });
  std::vector<run_figures> runs(markers.size());
  for (std::size_t r = 0; r < markers.size(); ++r) {
    at(markers[r]).run = static_cast<int>(r);
    runs[r].cpu_ns = at(markers[r]).end - iv(markers[r]).start_ns;
  }

  // Run of every interval: its topmost marker's; else its parent's; else (rule 9) the latest-starting
  // marker of another thread whose closed interval holds its start.
  for (const int i : walk) {
    if (const int m = topmost_marker(i); m != none) {
      at(i).run = at(m).run;
      continue;
    }
    const int p = at(i).parent;
    if (p != none && at(p).run != none) {
      at(i).run = at(p).run;
      at(i).off_thread = at(p).off_thread;
      at(i).off_root = at(p).off_root;
      continue;
    }
    int best = none;
    for (const int m : markers) {
      if (iv(m).thread == iv(i).thread) continue;
      if (iv(m).start_ns <= iv(i).start_ns && iv(i).start_ns <= at(m).end &&
          (best == none || iv(m).start_ns > iv(best).start_ns)) {
        best = m;
      }
    }
    if (best != none && cross_thread) {
      at(i).run = at(best).run;
      at(i).off_thread = true;
      at(i).off_root = i;
    }
  }

  // The outermost region between i (included) and the boundary: the run's (topmost) marker on the
  // marker's thread (a nested marker is an ordinary interval), the off-thread subtree's root
  // (included) elsewhere.
  auto owning_region = [&](int i) -> int {
    int found = none;
    for (int a = i; a != none; a = at(a).parent) {
      if (at(a).run == none) break;
      if (!at(a).off_thread && a == markers[static_cast<std::size_t>(at(a).run)]) break;
      if (at(a).region) found = a;
      if (at(a).off_thread && a == at(a).off_root) break;
    }
    return found;
  };

  // Rules 4, 5 and 9: topmost instances.
  for (const int i : walk) {
    if (at(i).run == none || !at(i).region) continue;
    if (owning_region(i) != i) continue;
    region_figures& f = runs[static_cast<std::size_t>(at(i).run)].regions[*at(i).region];
    const std::int64_t duration = at(i).end - iv(i).start_ns;
    if (at(i).off_thread) {
      f.off_thread_cpu_ns += duration;
      f.seen_off_thread = true;
    } else {
      f.calls += 1;
      f.cpu_ns += duration;
    }
  }

  // Rule 6: each op to its launch's run and owning region (first call in input order with its id).
  for (const regionprof::device_op& op : t.device_ops) {
    if (op.correlation_id == 0) continue;
    int call = none;
    for (int i = 0; i < n && call == none; ++i) {
      if (regionprof::is_api_call(iv(i).kind) && iv(i).correlation_id == op.correlation_id) call = i;
    }
    if (call == none || at(call).run == none) continue;
    run_figures& run = runs[static_cast<std::size_t>(at(call).run)];
    const std::int64_t duration = op.end_ns - op.start_ns;
    run.device_ns += duration;
    int owner = owning_region(call);
    if (owner == none && at(call).off_thread) {
      // A launch outside an off-thread region: the topmost region open on the marker's thread.
      const int marker = markers[static_cast<std::size_t>(at(call).run)];
      for (const int i : walk) {
        if (iv(i).thread == iv(marker).thread && at(i).run == at(call).run && !at(i).off_thread && at(i).region &&
            owning_region(i) == i && iv(i).start_ns <= iv(call).start_ns && iv(call).start_ns <= at(i).end) {
          owner = i;
          break;
        }
      }
    }
    if (owner != none) run.regions[*at(owner).region].device_ns += duration;
  }

  for (run_figures& run : runs) {
    std::int64_t cpu = 0;
    std::int64_t device = 0;
    for (const auto& [id, f] : run.regions) {
      cpu += f.cpu_ns;
      device += f.device_ns;
    }
    run.residual_cpu_ns = std::max<std::int64_t>(0, run.cpu_ns - cpu);
    run.residual_device_ns = std::max<std::int64_t>(0, run.device_ns - device);
  }
  return runs;
}

}  // namespace brute
