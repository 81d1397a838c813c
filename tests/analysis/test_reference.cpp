// Random traces: analyze() against a deliberately naive O(n^2) reference of rules 1-8 and 10
// (cross_thread off), and the invariants of rule 4 (fractions + residual = 1) with cross_thread on and off.
//
// The reference shares no code with the engine: it finds each interval's parent by scanning every
// earlier interval of its thread, ownership by walking parent chains, the launching call of each device
// op by scanning all intervals, and the device union by testing every elementary segment.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "analysis/correlation_index.hpp"
#include "analysis/thread_order.hpp"
#include "regionprof/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/random_trace.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

namespace naive {

constexpr std::int64_t no_parent = -1;
constexpr std::int64_t no_run = -1;
constexpr std::int64_t skipped = -2;

struct region_figures {
  std::uint64_t calls = 0;
  std::int64_t cpu = 0;
  std::int64_t device = 0;
  std::int64_t first_seen = std::numeric_limits<std::int64_t>::max();
};

struct run_figures {
  std::int64_t cpu = 0;
  std::int64_t device = 0;
  std::int64_t busy = 0;
  std::int64_t span = 0;
  std::map<std::string, region_figures> regions;
  std::vector<std::pair<std::int64_t, std::int64_t>> ops;
};

struct key_figures {
  std::uint64_t count = 0;
  std::int64_t self_cpu = 0;
  std::int64_t total_cpu = 0;
  std::int64_t self_device = 0;
  std::int64_t total_device = 0;
};

struct result {
  std::vector<run_figures> runs;
  std::map<std::pair<std::string, device_type>, key_figures> keys;
  std::int64_t overlaps = 0;
  std::int64_t nested_markers = 0;
  std::int64_t unmapped = 0;
  std::int64_t off_thread_intervals = 0;
  std::int64_t off_thread_ops = 0;
  std::int64_t uncorrelated = 0;
  std::int64_t anomalies = 0;
};

bool matchable(const cpu_interval& i) {
  return i.kind == interval_kind::range || i.kind == interval_kind::cpu_op || i.kind == interval_kind::python_function;
}

bool is_marker(const trace& t, const cpu_interval& i) {
  return matchable(i) && t.strings.view(i.name) == "regionprof.profiled_run" &&
         t.strings.view(t.domains[i.domain]) == "regionprof";
}

std::string region_id(const trace& t, const cpu_interval& i) {
  if (!matchable(i) || is_marker(t, i)) return {};
  const std::string name(t.strings.view(i.name));
  if (name.rfind("aot_module:", 0) == 0 || name.rfind("untuned_module:", 0) == 0) return name;
  return {};
}

/// Rules 1-8 and 10 for the default rules, cross_thread off.
result analyze(const trace& t, std::size_t skip_runs) {
  const std::size_t n = t.intervals.size();
  auto eff_end = [&](std::size_t i) { return std::max(t.intervals[i].start_ns, t.intervals[i].end_ns); };
  std::vector<std::int64_t> parent(n, no_parent);
  std::vector<std::int64_t> end(n);
  std::vector<std::size_t> position(n);
  result out;

  // Rule 1: sort each thread's intervals, then each interval's parent is the latest earlier interval that
  // is still open at its start (ends after it, or ends at it when the interval has zero length).
  std::map<std::uint32_t, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < n; ++i) by_thread[t.intervals[i].thread].push_back(i);
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
      if (t.intervals[a].start_ns != t.intervals[b].start_ns) return t.intervals[a].start_ns < t.intervals[b].start_ns;
      if (eff_end(a) != eff_end(b)) return eff_end(a) > eff_end(b);
      return a < b;
    });
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::size_t b = list[k];
      position[b] = k;
      const std::int64_t s = t.intervals[b].start_ns;
      std::int64_t e = eff_end(b);
      for (std::size_t j = k; j-- > 0;) {
        const std::size_t a = list[j];
        if (end[a] > s || (end[a] == s && e == s)) {
          parent[b] = static_cast<std::int64_t>(a);
          break;
        }
      }
      if (parent[b] != no_parent && e > end[parent[b]]) {
        e = end[parent[b]];
        ++out.overlaps;
      }
      end[b] = e;
    }
  }
  auto chain = [&](std::size_t i) {  // self first, root last
    std::vector<std::size_t> c;
    for (std::int64_t x = static_cast<std::int64_t>(i); x != no_parent; x = parent[x]) c.push_back(static_cast<std::size_t>(x));
    return c;
  };

  // Rule 2: topmost markers in time order; the first skip_runs are skipped.
  std::vector<std::size_t> markers;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_marker(t, t.intervals[i])) continue;
    const auto c = chain(i);
    if (std::any_of(c.begin() + 1, c.end(), [&](std::size_t x) { return is_marker(t, t.intervals[x]); })) {
      ++out.nested_markers;
    } else {
      markers.push_back(i);
    }
  }
  std::sort(markers.begin(), markers.end(), [&](std::size_t a, std::size_t b) {
    if (t.intervals[a].start_ns != t.intervals[b].start_ns) return t.intervals[a].start_ns < t.intervals[b].start_ns;
    if (t.intervals[a].thread != t.intervals[b].thread) return t.intervals[a].thread < t.intervals[b].thread;
    return position[a] < position[b];
  });
  std::map<std::size_t, std::int64_t> run_of_marker;
  for (std::size_t k = 0; k < markers.size(); ++k) {
    if (k < skip_runs) {
      run_of_marker[markers[k]] = skipped;
    } else {
      run_of_marker[markers[k]] = static_cast<std::int64_t>(k - skip_runs);
      run_figures run;
      run.cpu = end[markers[k]] - t.intervals[markers[k]].start_ns;
      out.runs.push_back(run);
    }
  }
  // Rule 9's lookup (used only to classify off-thread work, which cross_thread off leaves unattributed).
  auto other_thread_run = [&](std::size_t x) {
    std::int64_t found = no_run;
    for (std::size_t m : markers) {
      if (t.intervals[m].thread != t.intervals[x].thread && t.intervals[m].start_ns <= t.intervals[x].start_ns &&
          t.intervals[x].start_ns <= end[m]) {
        found = run_of_marker[m];  // the latest-starting one wins
      }
    }
    return found;
  };
  struct owner {
    std::int64_t run = no_run;  // no_run, skipped or a run
    bool off_thread = false;    // inside another thread's marker interval
    std::int64_t marker = -1;
  };
  std::vector<owner> owners(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = chain(i);
    std::int64_t top_marker = -1;
    for (std::size_t x : c) {
      if (is_marker(t, t.intervals[x])) top_marker = static_cast<std::int64_t>(x);
    }
    if (top_marker >= 0) {
      owners[i] = {run_of_marker[static_cast<std::size_t>(top_marker)], false, top_marker};
      continue;
    }
    for (std::size_t k = c.size(); k-- > 0;) {
      const std::int64_t code = other_thread_run(c[k]);
      if (code != no_run) {
        owners[i] = {code, code != skipped, -1};
        break;
      }
    }
  }
  auto on_thread_run = [&](std::size_t i) {
    return owners[i].run >= 0 && !owners[i].off_thread ? owners[i].run : no_run;
  };
  // The topmost region below the marker (root-most region in the chain), or "".
  auto topmost_region = [&](std::size_t i) {
    std::string id;
    for (std::size_t x : chain(i)) {
      if (static_cast<std::int64_t>(x) == owners[i].marker) break;
      if (const std::string r = region_id(t, t.intervals[x]); !r.empty()) id = r;
    }
    return id;
  };

  // Rules 3-5, 8.
  for (std::size_t i = 0; i < n; ++i) {
    const std::string id = region_id(t, t.intervals[i]);
    if (owners[i].off_thread) ++out.off_thread_intervals;
    if (id.empty()) continue;
    if (owners[i].run == no_run) {
      ++out.unmapped;
      continue;
    }
    const std::int64_t r = on_thread_run(i);
    if (r == no_run || topmost_region(i) != id) continue;
    // Topmost only if no region sits between it and the marker.
    bool nested = false;
    for (std::size_t x : chain(i)) {
      if (x == i) continue;
      if (static_cast<std::int64_t>(x) == owners[i].marker) break;
      nested = nested || !region_id(t, t.intervals[x]).empty();
    }
    if (nested) continue;
    region_figures& f = out.runs[static_cast<std::size_t>(r)].regions[id];
    ++f.calls;
    f.cpu += end[i] - t.intervals[i].start_ns;
    f.first_seen = std::min(f.first_seen, t.intervals[i].start_ns);
  }

  // Rule 6: each op's launching call by scanning every interval.
  std::vector<std::int64_t> call_of(t.device_ops.size(), -1);
  for (std::size_t o = 0; o < t.device_ops.size(); ++o) {
    const device_op& op = t.device_ops[o];
    for (std::size_t i = 0; i < n && op.correlation_id != 0; ++i) {
      if (is_api_call(t.intervals[i].kind) && t.intervals[i].correlation_id == op.correlation_id) {
        call_of[o] = static_cast<std::int64_t>(i);
        break;
      }
    }
    if (call_of[o] < 0) {
      ++out.uncorrelated;
      continue;
    }
    const std::size_t call = static_cast<std::size_t>(call_of[o]);
    if (op.start_ns < t.intervals[call].start_ns) ++out.anomalies;
    if (owners[call].off_thread) ++out.off_thread_ops;
    const std::int64_t r = on_thread_run(call);
    if (r == no_run) continue;
    const std::int64_t d = std::max<std::int64_t>(0, op.end_ns - op.start_ns);
    run_figures& run = out.runs[static_cast<std::size_t>(r)];
    run.device += d;
    run.ops.emplace_back(op.start_ns, op.start_ns + d);
    if (const std::string id = topmost_region(call); !id.empty()) run.regions[id].device += d;
    key_figures& k = out.keys[{std::string(t.strings.view(op.name)), device_type::cuda}];
    ++k.count;
    k.self_device += d;
    k.total_device += d;
  }
  for (run_figures& run : out.runs) {
    if (run.ops.empty()) continue;
    std::vector<std::int64_t> points;
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    for (const auto& [s, e] : run.ops) {
      points.push_back(s);
      points.push_back(e);
      first = std::min(first, s);
      last = std::max(last, e);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    for (std::size_t p = 0; p + 1 < points.size(); ++p) {
      const bool covered = std::any_of(run.ops.begin(), run.ops.end(), [&](const auto& op) {
        return op.first <= points[p] && points[p + 1] <= op.second;
      });
      if (covered) run.busy += points[p + 1] - points[p];
    }
    run.span = last - first;
  }

  // Rule 10 over the intervals of each run (on-thread: cross_thread is off).
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t r = on_thread_run(i);
    if (r == no_run) continue;
    key_figures& k = out.keys[{std::string(t.strings.view(t.intervals[i].name)), device_type::cpu}];
    const std::int64_t d = end[i] - t.intervals[i].start_ns;
    ++k.count;
    k.total_cpu += d;
    k.self_cpu += d;
    for (std::size_t c = 0; c < n; ++c) {
      if (parent[c] == static_cast<std::int64_t>(i) && on_thread_run(c) == r) k.self_cpu -= end[c] - t.intervals[c].start_ns;
    }
    for (std::size_t o = 0; o < t.device_ops.size(); ++o) {
      if (call_of[o] < 0 || on_thread_run(static_cast<std::size_t>(call_of[o])) != r) continue;
      const std::int64_t d_op = std::max<std::int64_t>(0, t.device_ops[o].end_ns - t.device_ops[o].start_ns);
      const auto c = chain(static_cast<std::size_t>(call_of[o]));
      // Ancestors in another run (above a nested run's marker) do not count the op.
      bool in_subtree = false;
      for (std::size_t x : c) {
        if (on_thread_run(x) != r) break;
        in_subtree = in_subtree || x == i;
      }
      if (in_subtree) k.total_device += d_op;
      if (static_cast<std::int64_t>(i) == call_of[o]) k.self_device += d_op;
    }
  }
  return out;
}

}  // namespace naive

std::int64_t warning_figure(const analysis_result& r, warning_code code) {
  const warning* w = find_warning(r, code);
  return w ? leading_count(w->message) : 0;
}

std::int64_t off_thread_ops(const analysis_result& r) {
  const warning* w = find_warning(r, warning_code::off_thread_events);
  if (!w) return 0;
  const auto at = w->message.find(" and ");
  return leading_count(std::string_view(w->message).substr(at + 5));
}

void compare_with_reference(const trace& t, std::size_t skip_runs) {
  analysis_options options;
  options.skip_runs = skip_runs;
  options.row_limit = 1'000'000;
  const analysis_result got = analyze(t, options);
  const naive::result want = naive::analyze(t, skip_runs);

  BOOST_TEST_REQUIRE(got.runs.size() == want.runs.size());
  for (std::size_t r = 0; r < want.runs.size(); ++r) {
    BOOST_TEST_CONTEXT("run " << r) {
      const run_result& run = got.runs[r];
      const naive::run_figures& w = want.runs[r];
      BOOST_TEST(run.cpu_time_ns == w.cpu);
      std::int64_t region_cpu = 0;
      std::int64_t region_device = 0;
      BOOST_TEST(run.regions.size() == w.regions.size());
      std::int64_t previous_first = std::numeric_limits<std::int64_t>::min();
      for (const region_aggregate& a : run.regions) {
        const std::string& id = got.regions.at(a.region).id;
        BOOST_TEST_CONTEXT("region " << id) {
          auto found = w.regions.find(id);
          BOOST_TEST_REQUIRE((found != w.regions.end()));
          BOOST_TEST(a.calls == found->second.calls);
          BOOST_TEST(a.cpu_time_ns == found->second.cpu);
          BOOST_TEST(a.device_time_ns.value_or(0) == found->second.device);
          BOOST_TEST(!a.off_thread_cpu_time_ns);
          BOOST_TEST(found->second.first_seen >= previous_first);  // order of first appearance
          previous_first = found->second.first_seen;
        }
      }
      for (const auto& [id, figures] : w.regions) {
        region_cpu += figures.cpu;
        region_device += figures.device;
      }
      BOOST_TEST(run.residual_cpu_ns == std::max<std::int64_t>(0, w.cpu - region_cpu));
      if (t.has_device_data()) {
        BOOST_TEST(*run.device_time_ns == w.device);
        BOOST_TEST(*run.device_busy_ns == w.busy);
        BOOST_TEST(*run.device_span_ns == w.span);
        BOOST_TEST(*run.residual_device_ns == std::max<std::int64_t>(0, w.device - region_device));
      }
    }
  }
  // Rule 10: every row, both kinds.
  BOOST_TEST(got.cpu_time_total.rows.size() == want.keys.size());
  for (const key_average_row& row : got.cpu_time_total.rows) {
    BOOST_TEST_CONTEXT("key " << row.key << " " << to_string(row.type)) {
      auto found = want.keys.find({row.key, row.type});
      BOOST_TEST_REQUIRE((found != want.keys.end()));
      BOOST_TEST(row.count == found->second.count);
      BOOST_TEST(row.self_cpu_time_ns == found->second.self_cpu);
      BOOST_TEST(row.cpu_time_total_ns == found->second.total_cpu);
      if (t.has_device_data()) {
        BOOST_TEST(*row.self_device_time_ns == found->second.self_device);
        BOOST_TEST(*row.device_time_total_ns == found->second.total_device);
      }
    }
  }
  BOOST_TEST(warning_figure(got, warning_code::overlapping_ranges) == want.overlaps);
  BOOST_TEST(warning_figure(got, warning_code::unmapped_region_events) == want.unmapped);
  BOOST_TEST(warning_figure(got, warning_code::off_thread_events) == want.off_thread_intervals);
  BOOST_TEST(off_thread_ops(got) == want.off_thread_ops);
  BOOST_TEST(warning_figure(got, warning_code::uncorrelated_device_ops) == want.uncorrelated);
  BOOST_TEST(warning_figure(got, warning_code::clock_anomaly) == want.anomalies);
  if (want.nested_markers > 0) {
    BOOST_TEST(warning_figure(got, warning_code::run_count_mismatch) == want.nested_markers);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference)

BOOST_AUTO_TEST_CASE(matches_naive_reference_on_random_traces) {
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      compare_with_reference(random_trace(seed), 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(matches_naive_reference_with_skip_runs_and_more_threads) {
  random_trace_options options;
  options.threads = 5;
  options.top_level_items = 5;
  options.overlap_probability = 0.2;
  options.other_thread_marker_probability = 0.3;
  for (std::uint64_t seed = 1000; seed < 1100; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      compare_with_reference(random_trace(seed, options), seed % 3);
    }
  }
}

BOOST_AUTO_TEST_CASE(fractions_and_residual_sum_to_one) {
  // Per run and domain: sum(region fractions) + residual fraction = 1 within 1e-9 (rule 4), and the
  // regions never own more than the run's total.
  random_trace_options shape;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    shape.threads = 1 + seed % 4;
    shape.overlap_probability = static_cast<double>(seed % 5) * 0.05;
    const trace t = random_trace(seed * 7919, shape);
    for (bool cross_thread : {false, true}) {
      analysis_options options;
      options.cross_thread = cross_thread;
      options.skip_runs = seed % 2;
      const analysis_result r = analyze(t, options);
      for (const run_result& run : r.runs) {
        BOOST_TEST_CONTEXT("seed " << seed << " cross_thread " << cross_thread << " run " << run.run_index) {
          std::int64_t cpu = 0;
          std::int64_t device = 0;
          for (const region_aggregate& a : run.regions) {
            BOOST_TEST(a.cpu_time_ns >= 0);
            cpu += a.cpu_time_ns;
            device += a.device_time_ns.value_or(0);
          }
          BOOST_TEST(cpu <= run.cpu_time_ns);
          if (run.cpu_time_ns > 0) {
            double sum = static_cast<double>(run.residual_cpu_ns) / static_cast<double>(run.cpu_time_ns);
            for (const region_aggregate& a : run.regions) {
              sum += static_cast<double>(a.cpu_time_ns) / static_cast<double>(run.cpu_time_ns);
            }
            BOOST_TEST(std::abs(sum - 1.0) <= 1e-9);
          }
          if (run.device_time_ns) {
            BOOST_TEST(device <= *run.device_time_ns);
            BOOST_TEST(*run.device_busy_ns <= *run.device_time_ns);
            BOOST_TEST(*run.device_busy_ns <= *run.device_span_ns);
            if (*run.device_time_ns > 0) {
              double sum = static_cast<double>(*run.residual_device_ns) / static_cast<double>(*run.device_time_ns);
              for (const region_aggregate& a : run.regions) {
                sum += static_cast<double>(*a.device_time_ns) / static_cast<double>(*run.device_time_ns);
              }
              BOOST_TEST(std::abs(sum - 1.0) <= 1e-9);
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(thread_order_matches_a_stable_sort) {
  // Wide time ranges (several radix passes), negative times, many equal starts, unsorted input.
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 17;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<cpu_interval> intervals(2000);
    const std::int64_t scale = std::int64_t{1} << (round * 3 % 62);
    for (cpu_interval& i : intervals) {
      i.thread = static_cast<thread_index>(next() % 3);
      i.start_ns = static_cast<std::int64_t>(next() % 50) * scale - (round % 2 ? scale * 10 : 0);
      i.end_ns = i.start_ns + static_cast<std::int64_t>(next() % 4) - 1;  // sometimes end < start
    }
    const detail::thread_order order = detail::order_by_thread(intervals, 3);
    for (std::size_t thread = 0; thread < 3; ++thread) {
      std::vector<std::uint32_t> want;
      for (std::uint32_t i = 0; i < intervals.size(); ++i) {
        if (intervals[i].thread == thread) want.push_back(i);
      }
      std::stable_sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (intervals[a].start_ns != intervals[b].start_ns) return intervals[a].start_ns < intervals[b].start_ns;
        return std::max(intervals[a].end_ns, intervals[a].start_ns) > std::max(intervals[b].end_ns, intervals[b].start_ns);
      });
      const auto got = order.of(thread);
      BOOST_TEST(std::vector<std::uint32_t>(got.begin(), got.end()) == want, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(thread_order_merges_a_few_ordered_stretches) {
  // Producers append ordered sequences (ranges, then API calls): 1 to 20 ordered stretches per thread,
  // with equal keys across stretches (the merge must keep input order among them).
  std::uint64_t state = 99;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 17;
  };
  for (std::size_t stretches = 1; stretches <= 20; ++stretches) {
    std::vector<cpu_interval> intervals;
    for (std::size_t s = 0; s < stretches; ++s) {
      std::int64_t start = static_cast<std::int64_t>(next() % 10);
      for (std::size_t k = 0, n = 1 + next() % 40; k < n; ++k) {
        cpu_interval i;
        i.thread = static_cast<thread_index>(s % 2);
        i.start_ns = start;
        i.end_ns = start + static_cast<std::int64_t>(next() % 5);
        i.name = static_cast<name_id>(intervals.size());
        intervals.push_back(i);
        start += static_cast<std::int64_t>(next() % 3);  // equal starts within a stretch too
      }
    }
    // Within a stretch: start ascending, end descending at equal starts.
    for (std::size_t a = 0; a < intervals.size();) {
      std::size_t b = a + 1;
      while (b < intervals.size() && intervals[b].start_ns == intervals[a].start_ns &&
             intervals[b].thread == intervals[a].thread) {
        ++b;
      }
      std::sort(intervals.begin() + static_cast<std::ptrdiff_t>(a), intervals.begin() + static_cast<std::ptrdiff_t>(b),
                [](const cpu_interval& x, const cpu_interval& y) { return x.end_ns > y.end_ns; });
      a = b;
    }
    const detail::thread_order order = detail::order_by_thread(intervals, 2);
    for (std::size_t thread = 0; thread < 2; ++thread) {
      std::vector<std::uint32_t> want;
      for (std::uint32_t i = 0; i < intervals.size(); ++i) {
        if (intervals[i].thread == thread) want.push_back(i);
      }
      std::stable_sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (intervals[a].start_ns != intervals[b].start_ns) return intervals[a].start_ns < intervals[b].start_ns;
        return intervals[a].end_ns > intervals[b].end_ns;
      });
      const auto got = order.of(thread);
      BOOST_TEST_CONTEXT(stretches << " stretches, thread " << thread) {
        BOOST_TEST(std::vector<std::uint32_t>(got.begin(), got.end()) == want, boost::test_tools::per_element());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(correlation_index_dense_and_sparse) {
  auto call = [](std::uint32_t id, interval_kind kind = interval_kind::runtime_api) {
    cpu_interval i;
    i.kind = kind;
    i.correlation_id = id;
    return i;
  };
  // Dense: ids 5..8 with a gap at 7, a duplicate 6, a range (not an API call) with id 9.
  const std::vector<cpu_interval> dense{call(5), call(6), call(8), call(6), call(9, interval_kind::range)};
  const detail::correlation_index d(dense);
  BOOST_TEST(d.call(d.slot(6)) == 1u);  // the first call with id 6
  BOOST_TEST(d.call(d.slot(8)) == 2u);
  BOOST_TEST(d.slot(7) == detail::correlation_index::none);
  BOOST_TEST(d.slot(9) == detail::correlation_index::none);
  BOOST_TEST(d.slot(4) == detail::correlation_index::none);
  BOOST_TEST(d.slot(0) == detail::correlation_index::none);
  BOOST_TEST(d.duplicate_calls() == 1u);
  // Sparse: ids spread over 4e9.
  const std::vector<cpu_interval> sparse{call(4'000'000'000u), call(3), call(2'000'000'000u, interval_kind::driver_api),
                                         call(3)};
  const detail::correlation_index s(sparse);
  BOOST_TEST(s.call(s.slot(4'000'000'000u)) == 0u);
  BOOST_TEST(s.call(s.slot(2'000'000'000u)) == 2u);
  BOOST_TEST(s.call(s.slot(3)) == 1u);
  BOOST_TEST(s.slot(4) == detail::correlation_index::none);
  BOOST_TEST(s.slot(0) == detail::correlation_index::none);
  BOOST_TEST(s.duplicate_calls() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
