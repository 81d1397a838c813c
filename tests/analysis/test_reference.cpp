// Random traces: analyze() against the naive reference of tests/support/reference_attribution.hpp
// (rules 1-8 and 10, cross_thread off), and the invariants of rule 4 (fractions + residual = 1) with
// cross_thread on and off.
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

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/correlation_index.hpp"
#include "regionprof/analysis/thread_order.hpp"
#include "support/analysis_queries.hpp"
#include "support/random_trace.hpp"
#include "support/reference_attribution.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

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
  reference::rules rules = reference::default_rules();
  rules.skip_runs = skip_runs;
  const reference::result want = reference::attribute(t, rules);

  BOOST_TEST_REQUIRE(got.runs.size() == want.runs.size());
  for (std::size_t r = 0; r < want.runs.size(); ++r) {
    BOOST_TEST_CONTEXT("run " << r) {
      const run_result& run = got.runs[r];
      const reference::run_figures& w = want.runs[r];
      BOOST_TEST(run.cpu_time_ns == w.cpu_ns);
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
          BOOST_TEST(a.cpu_time_ns == found->second.cpu_ns);
          BOOST_TEST(a.device_time_ns.value_or(0) == found->second.device_ns);
          BOOST_TEST(!a.off_thread_cpu_time_ns);
          BOOST_TEST(found->second.first_seen_ns >= previous_first);  // order of first appearance
          previous_first = found->second.first_seen_ns;
        }
      }
      for (const auto& [id, figures] : w.regions) {
        region_cpu += figures.cpu_ns;
        region_device += figures.device_ns;
      }
      BOOST_TEST(run.residual_cpu_ns == std::max<std::int64_t>(0, w.cpu_ns - region_cpu));
      if (t.has_device_data()) {
        BOOST_TEST(*run.device_time_ns == w.device_ns);
        BOOST_TEST(*run.device_busy_ns == w.busy_ns);
        BOOST_TEST(*run.device_span_ns == w.span_ns);
        BOOST_TEST(*run.residual_device_ns == std::max<std::int64_t>(0, w.device_ns - region_device));
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
  // Rule 20: every owner's rows, by total time in the row's own domain.
  BOOST_TEST(got.region_ops.size() == got.regions.size() + (got.runs.empty() ? 0 : 1));
  std::size_t owners = 0;
  for (const region_op_rows& entry : got.region_ops) {
    const std::string owner =
        entry.region == region_op_rows::residual ? reference::residual_owner : got.regions.at(entry.region).id;
    BOOST_TEST_CONTEXT("region ops of " << owner) {
      const auto found = want.region_keys.find(owner);
      if (found == want.region_keys.end()) {
        BOOST_TEST(entry.rows.empty());
        continue;
      }
      ++owners;
      BOOST_TEST(entry.rows.size() == found->second.size());
      std::int64_t previous = std::numeric_limits<std::int64_t>::max();
      for (const key_average_row& row : entry.rows) {
        BOOST_TEST_CONTEXT("key " << row.key << " " << to_string(row.type)) {
          const auto figures = found->second.find({row.key, row.type});
          BOOST_TEST_REQUIRE((figures != found->second.end()));
          BOOST_TEST(row.count == figures->second.count);
          BOOST_TEST(row.self_cpu_time_ns == figures->second.self_cpu);
          BOOST_TEST(row.cpu_time_total_ns == figures->second.total_cpu);
          if (t.has_device_data()) {
            BOOST_TEST(*row.self_device_time_ns == figures->second.self_device);
            BOOST_TEST(*row.device_time_total_ns == figures->second.total_device);
          }
          const std::int64_t total = own_domain_total_ns(row);
          BOOST_TEST(total <= previous);
          previous = total;
        }
      }
    }
  }
  BOOST_TEST(owners == want.region_keys.size());
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
