// Rule 21 (docs/design.md): memory events owned as launching calls are, summed per run, region and
// device, and the peaks over the regions' topmost spans and the runs' marker spans. Expectations by hand.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

/// The figures of `device` in the figures at `index`, or nullptr.
const device_memory* on_device(const analysis_result& result, std::uint32_t index, memory_device device) {
  const memory_figures* figures = memory_of(result, index);
  if (figures == nullptr) return nullptr;
  for (const device_memory& d : *figures) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

device_memory figures(std::uint64_t allocated, std::uint64_t freed, std::uint64_t allocations, std::uint64_t frees,
                      std::optional<std::int64_t> peak, memory_device device = cpu_memory) {
  return {device, allocated, freed, allocations, frees, peak};
}

void check(const device_memory* actual, const device_memory& expected, const std::string& what) {
  BOOST_TEST_REQUIRE(actual != nullptr, what);
  BOOST_TEST(actual->allocated_bytes == expected.allocated_bytes, what);
  BOOST_TEST(actual->freed_bytes == expected.freed_bytes, what);
  BOOST_TEST(actual->allocations == expected.allocations, what);
  BOOST_TEST(actual->frees == expected.frees, what);
  BOOST_TEST((actual->peak_allocated_bytes == expected.peak_allocated_bytes), what);
}

/// Run [0, 1000] on thread 1: a [100, 400] with b nested [200, 300], then b [500, 800]. Events on
/// thread 1 (cpu unless said): 50 +100 (total 100), 100 +200 (300), 250 +1000 (1300), 300 -1000 (300),
/// 400 -200 (100), 450 +64 (164), 500 +10 on cuda:0 (10), 800 -64 (100), 900 -100 (0), 1100 +5 (5).
trace_builder one_thread() {
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 100, 400).range("aot_module:b", 200, 300);
  b.range("aot_module:b", 500, 800);
  b.memory(50, 100, 100).memory(100, 200, 300).memory(250, 1000, 1300).memory(300, -1000, 300);
  b.memory(400, -200, 100).memory(450, 64, 164).memory(500, 10, 10, 0).memory(800, -64, 100);
  b.memory(900, -100, 0).memory(1100, 5, 5);
  return b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory)

BOOST_AUTO_TEST_CASE(events_go_to_the_topmost_region_open_at_their_instant) {
  const analysis_result r = analyze(one_thread().build(), analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  const region_aggregate* a = find_region(r, r.runs.at(0), "aot_module:a");
  const region_aggregate* b = find_region(r, r.runs.at(0), "aot_module:b");
  BOOST_TEST_REQUIRE((a && b));
  // a: its start (100) and end (400) are its own (closed), as is what nested b did (250, 300).
  check(on_device(r, a->memory, cpu_memory), figures(1200, 1200, 2, 2, 1300), "a cpu");
  BOOST_TEST(memory_of(r, a->memory)->size() == 1u);
  // b: the free at its end; on cuda:0 the allocation at its start. cpu first.
  check(on_device(r, b->memory, cpu_memory), figures(0, 64, 0, 1, 100), "b cpu");
  check(on_device(r, b->memory, 0), figures(10, 0, 1, 0, 10, 0), "b cuda:0");
  BOOST_TEST(memory_of(r, b->memory)->front().device == cpu_memory);
  // The residual: 50, 450, 900; no peak (it is no span). 1100 is after the run.
  check(on_device(r, r.run_memory.at(0).residual, cpu_memory), figures(164, 100, 2, 1, std::nullopt), "residual");
  check(on_device(r, r.run_memory.at(0).run, cpu_memory), figures(1364, 1364, 4, 4, 1300), "run cpu");
  check(on_device(r, r.run_memory.at(0).run, 0), figures(10, 0, 1, 0, 10, 0), "run cuda:0");
  BOOST_TEST(!find_warning(r.warnings, warning_code::off_thread_events));
}

BOOST_AUTO_TEST_CASE(without_totals_there_are_no_peaks) {
  const analysis_result r =
      analyze(trace_builder().thread(1).marker(0, 100).range("aot_module:a", 10, 20).memory(15, 8).build(), {});
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:a")->memory, cpu_memory), figures(8, 0, 1, 0, std::nullopt), "a");
  check(on_device(r, r.run_memory.at(0).run, cpu_memory), figures(8, 0, 1, 0, std::nullopt), "run");
  BOOST_TEST(r.run_memory.at(0).residual == no_memory);  // runs' figures, none of a residual
}

BOOST_AUTO_TEST_CASE(a_peak_counts_every_threads_events_within_the_span) {
  // Another thread's event inside a's span raises a's peak without cross_thread, though it is not a's.
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 100, 400).memory(150, 10, 10);
  b.thread(2).range("worker", 0, 1000).memory(200, 500, 510).memory(600, -500, 10);
  const analysis_result r = analyze(b.build(), analysis_options{});
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:a")->memory, cpu_memory), figures(10, 0, 1, 0, 510), "a");
  check(on_device(r, r.run_memory.at(0).run, cpu_memory), figures(10, 0, 1, 0, 510), "run");
  const warning* off = find_warning(r.warnings, warning_code::off_thread_events);
  BOOST_TEST_REQUIRE(off != nullptr);
  BOOST_TEST(off->message.find("2 memory event(s)") != std::string::npos, off->message);
}

BOOST_AUTO_TEST_CASE(cross_thread_events_go_where_off_thread_launches_go) {
  // Thread 2: 250 outside its regions while a is open on the marker's thread -> a; 450 -> the residual;
  // 650 inside its own region c -> c. c's peak is over its off-thread span [600, 700].
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 100, 400);
  b.thread(2).memory(250, 7, 7).memory(450, 3, 10).range("aot_module:c", 600, 700).memory(650, -7, 3);
  analysis_options options;
  options.cross_thread = true;
  const analysis_result r = analyze(b.build(), options);
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:a")->memory, cpu_memory), figures(7, 0, 1, 0, 7), "a");
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:c")->memory, cpu_memory), figures(0, 7, 0, 1, 3), "c");
  check(on_device(r, r.run_memory.at(0).residual, cpu_memory), figures(3, 0, 1, 0, std::nullopt), "residual");
  check(on_device(r, r.run_memory.at(0).run, cpu_memory), figures(10, 7, 2, 1, 10), "run");
  BOOST_TEST(!find_warning(r.warnings, warning_code::off_thread_events));
}

BOOST_AUTO_TEST_CASE(a_failed_allocation_warns_naming_run_region_and_bytes) {
  trace_builder b = one_thread();
  b.out_of_memory(350, 4096, 1300, 0).out_of_memory(950, 1, std::nullopt);
  const analysis_result r = analyze(b.build(), analysis_options{});
  const warning* oom = find_warning(r.warnings, warning_code::out_of_memory);
  BOOST_TEST_REQUIRE(oom != nullptr);
  BOOST_TEST(oom->message ==
             "2 allocation(s) failed during the runs; the first in run 0, owned by region aot_module:a, asked for "
             "4096 bytes on cuda:0 with 1300 bytes allocated (rule 21).");
  // A failed allocation allocates nothing, but the total it reports counts for the peaks.
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:a")->memory, cpu_memory), figures(1200, 1200, 2, 2, 1300), "a");
  check(on_device(r, find_region(r, r.runs.at(0), "aot_module:a")->memory, 0), figures(0, 0, 0, 0, 1300, 0), "a cuda");
  check(on_device(r, r.run_memory.at(0).run, 0), figures(10, 0, 1, 0, 1300, 0), "run cuda:0");
}

BOOST_AUTO_TEST_CASE(skipped_runs_and_events_outside_runs_count_nowhere) {
  trace_builder b;
  b.thread(1).marker(0, 100).memory(50, 1, 1).marker(200, 300).memory(250, 2, 3).memory(400, 4, 7);
  analysis_options options;
  options.skip_runs = 1;
  const analysis_result r = analyze(b.build(), options);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  check(on_device(r, r.run_memory.at(0).run, cpu_memory), figures(2, 0, 1, 0, 3), "run");
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(regions_and_residual_sum_to_the_run_on_random_traces) {
  std::mt19937 random(21);
  for (int round = 0; round < 40; ++round) {
    trace_builder b;
    std::int64_t time = 0;
    for (int thread = 1; thread <= 2; ++thread) {
      b.thread(thread);
      time = 0;
      for (int run = 0; run < 3; ++run) {
        const std::int64_t run_start = time;
        if (thread == 1) b.marker(run_start, run_start + 1000);
        for (int k = 0; k < 4; ++k) {
          const std::int64_t s = run_start + static_cast<std::int64_t>(random() % 900);
          const std::int64_t e = s + static_cast<std::int64_t>(random() % 200);
          b.range(random() % 2 ? "aot_module:x" : "aot_module:y", s, e);
        }
        for (int k = 0; k < 20; ++k) {
          const std::int64_t t = run_start - 50 + static_cast<std::int64_t>(random() % 1100);
          const auto bytes = static_cast<std::int64_t>(random() % 1000) - 500;
          b.memory(t, bytes == 0 ? 1 : bytes, static_cast<std::int64_t>(random() % 5000),
                   static_cast<memory_device>(static_cast<int>(random() % 2) - 1));
        }
        time = run_start + 1000;
      }
    }
    for (bool cross : {false, true}) {
      analysis_options options;
      options.cross_thread = cross;
      const analysis_result r = analyze(b.build(), options);
      for (std::size_t position = 0; position < r.runs.size(); ++position) {
        const run_result& run = r.runs[position];
        memory_figures sum;
        const auto add = [&](std::uint32_t index) {
          const memory_figures* f = memory_of(r, index);
          if (f == nullptr) return;
          for (const device_memory& d : *f) {
            device_memory* into = nullptr;
            for (device_memory& s : sum) into = s.device == d.device ? &s : into;
            if (into == nullptr) into = &sum.emplace_back(device_memory{.device = d.device});
            into->allocated_bytes += d.allocated_bytes;
            into->freed_bytes += d.freed_bytes;
            into->allocations += d.allocations;
            into->frees += d.frees;
          }
        };
        for (const region_aggregate& a : run.regions) add(a.memory);
        add(r.run_memory.at(position).residual);
        for (const device_memory& d : sum) {
          const device_memory* total = on_device(r, r.run_memory.at(position).run, d.device);
          BOOST_TEST_REQUIRE(total != nullptr);
          BOOST_TEST(total->allocated_bytes == d.allocated_bytes);
          BOOST_TEST(total->freed_bytes == d.freed_bytes);
          BOOST_TEST(total->allocations == d.allocations);
          BOOST_TEST(total->frees == d.frees);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(key_average_rows_carry_the_bytes_allocated_inside_them) {
  // Run [0, 1000]: a [100, 400] > aten::linear [150, 350] > aten::addmm [200, 300]. Allocations: 50 +8
  // (the marker's own), 160 +100 (linear's own), 250 +4096 (addmm's); a free at 320 counts nowhere.
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 100, 400).cpu_op("aten::linear", 150, 350);
  b.cpu_op("aten::addmm", 200, 300).memory(50, 8).memory(160, 100).memory(250, 4096).memory(320, -4096);
  const analysis_result r = analyze(b.build(), analysis_options{});
  const auto row = [&](const std::vector<key_average_row>& rows, const std::string& key) -> const key_average_row& {
    for (const key_average_row& candidate : rows) {
      if (candidate.key == key) return candidate;
    }
    BOOST_FAIL("no row " + key);
    return rows.front();
  };
  const std::vector<key_average_row>& rows = r.cpu_time_total.rows;
  BOOST_TEST(row(rows, "aten::addmm").self_allocated_bytes.value() == 4096u);
  BOOST_TEST(row(rows, "aten::addmm").allocated_bytes.value() == 4096u);
  BOOST_TEST(row(rows, "aten::linear").self_allocated_bytes.value() == 100u);
  BOOST_TEST(row(rows, "aten::linear").allocated_bytes.value() == 4196u);
  BOOST_TEST(row(rows, "aot_module:a").self_allocated_bytes.value() == 0u);
  BOOST_TEST(row(rows, "aot_module:a").allocated_bytes.value() == 4196u);
  BOOST_TEST(row(rows, "regionprof.profiled_run").self_allocated_bytes.value() == 8u);
  BOOST_TEST(row(rows, "regionprof.profiled_run").allocated_bytes.value() == 4204u);
  // The region's ops carry the same bytes (rule 20).
  BOOST_TEST_REQUIRE(!r.region_ops.empty());
  BOOST_TEST(row(r.region_ops.front().rows, "aten::linear").allocated_bytes.value() == 4196u);
  // Without memory events the rows have no bytes.
  const analysis_result plain =
      analyze(trace_builder().thread(1).marker(0, 1000).cpu_op("aten::addmm", 200, 300).build(), {});
  BOOST_TEST(!row(plain.cpu_time_total.rows, "aten::addmm").allocated_bytes.has_value());
}

// The charted runs: the first with a sample (run 0) and the one holding the highest peak (run 1's 5000);
// run 2 (peak 1) is not charted. Samples and spans are ns since the run's start; one_thread()'s event at
// 1100 is in no run.
BOOST_AUTO_TEST_CASE(the_first_run_and_the_highest_peaks_run_are_charted) {
  trace_builder b = one_thread();
  b.marker(2000, 3000).range("aot_module:a", 2100, 2400).memory(2200, 5000, 5000).memory(2300, -5000, 0);
  b.marker(4000, 5000).memory(4500, 1, 1);
  const analysis_result r = analyze(b.build(), analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 3u);
  BOOST_TEST_REQUIRE(r.memory_timelines.size() == 2u);
  const memory_timeline& first = r.memory_timelines[0];
  BOOST_TEST(first.run == 0u);
  BOOST_TEST_REQUIRE(first.series.size() == 2u);
  BOOST_TEST((first.series[0] == memory_series{cpu_memory,
                                                {{50, 100}, {100, 300}, {250, 1300}, {300, 300}, {400, 100},
                                                 {450, 164}, {800, 100}, {900, 0}}}));
  BOOST_TEST((first.series[1] == memory_series{0, {{500, 10}}}));
  BOOST_TEST_REQUIRE(r.regions.size() == 2u);
  BOOST_TEST(r.regions[0].id == "aot_module:a");
  BOOST_TEST((first.spans == std::vector<region_span>{{0, 100, 400}, {1, 500, 800}}));  // nested b is no span
  BOOST_TEST(first.spans_left_out == 0u);
  const memory_timeline& highest = r.memory_timelines[1];
  BOOST_TEST(highest.run == 1u);
  BOOST_TEST((highest.series == std::vector<memory_series>{{cpu_memory, {{200, 5000}, {300, 0}}}}));
  BOOST_TEST((highest.spans == std::vector<region_span>{{0, 100, 400}}));

  // One run that is both: one timeline. Without totals: none.
  BOOST_TEST(analyze(one_thread().build(), analysis_options{}).memory_timelines.size() == 1u);
  trace_builder no_totals;
  no_totals.thread(1).marker(0, 100).range("aot_module:a", 10, 20).memory(15, 8);
  BOOST_TEST(analyze(no_totals.build(), analysis_options{}).memory_timelines.empty());
}

// A series of 2000 samples keeps, in each of 128 equal buckets of the run, the first, smallest, largest
// and last sample (M4): the peak and every bucket's extremes survive, at most 512 samples, each one of
// the events'. 1005 topmost instances: the first 1000 are spans, 5 are counted.
BOOST_AUTO_TEST_CASE(long_series_keep_each_buckets_extremes_and_spans_are_capped) {
  trace_builder b;
  b.thread(1).marker(0, 1'000'000);
  for (std::int64_t k = 0; k < 1005; ++k) b.range("aot_module:r", 900 * k + 100, 900 * k + 200);
  std::map<std::int64_t, std::int64_t> totals;  // time -> total
  for (std::int64_t i = 0; i < 2000; ++i) {
    const std::int64_t total = i == 1234 ? 999'999 : (i * 37) % 101 * 10;
    totals[500 * i] = total;
    b.memory(500 * i, 1, total);
  }
  const analysis_result r = analyze(b.build(), analysis_options{});
  BOOST_TEST_REQUIRE(r.memory_timelines.size() == 1u);
  const memory_timeline& timeline = r.memory_timelines[0];
  BOOST_TEST_REQUIRE(timeline.series.size() == 1u);
  const std::vector<memory_sample>& samples = timeline.series[0].samples;
  BOOST_TEST(samples.size() <= 512u);
  BOOST_TEST(samples.size() > 128u);
  const auto bucket = [](std::int64_t t) { return t * 128 / 1'000'001; };
  struct extremes {
    std::int64_t first = -1, last = -1, low = 1 << 30, high = -1;
  };
  std::map<std::int64_t, extremes> input;
  std::map<std::int64_t, extremes> output;
  const auto add = [&](std::map<std::int64_t, extremes>& into, std::int64_t t, std::int64_t total) {
    extremes& e = into[bucket(t)];
    if (e.first < 0) e.first = t;
    e.last = t;
    e.low = std::min(e.low, total);
    e.high = std::max(e.high, total);
  };
  for (const auto& [t, total] : totals) add(input, t, total);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    BOOST_TEST_REQUIRE(totals.count(samples[i].offset_ns) == 1u);
    BOOST_TEST(totals.at(samples[i].offset_ns) == samples[i].total_bytes);
    if (i > 0) BOOST_TEST(samples[i - 1].offset_ns < samples[i].offset_ns);
    add(output, samples[i].offset_ns, samples[i].total_bytes);
  }
  BOOST_TEST_REQUIRE(output.size() == input.size());
  for (const auto& [index, e] : input) {
    BOOST_TEST(output.at(index).first == e.first);
    BOOST_TEST(output.at(index).last == e.last);
    BOOST_TEST(output.at(index).low == e.low);
    BOOST_TEST(output.at(index).high == e.high);
  }
  BOOST_TEST((samples[0] == memory_sample{0, 0}));
  BOOST_TEST((std::find(samples.begin(), samples.end(), memory_sample{617'000, 999'999}) != samples.end()));
  BOOST_TEST_REQUIRE(timeline.spans.size() == 1000u);
  BOOST_TEST(timeline.spans_left_out == 5u);
  BOOST_TEST((timeline.spans[999] == region_span{0, 999 * 900 + 100, 999 * 900 + 200}));
}

BOOST_AUTO_TEST_SUITE_END()
