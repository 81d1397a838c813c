// Rules 1-9 on hand-built traces (tests/support/test_traces.cpp draws each layout); every expected figure
// is computed by hand in the comments.
#include <algorithm>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

analysis_result analyze_named(const std::string& name) {
  const named_trace t = test_trace(name);
  return analyze(t.value, t.options);
}

using ids = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(attribution)

BOOST_AUTO_TEST_CASE(one_run_one_region) {
  const analysis_result r = analyze_named("one_run_one_region");
  BOOST_TEST(r.has_device_data);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  const run_result& run = r.runs[0];
  BOOST_TEST(run.run_index == 0u);
  BOOST_TEST(run.cpu_time_ns == 1000);   // marker [0,1000]
  BOOST_TEST(run.wall_time_ns == 1000);  // no harness wall time: the marker's duration
  BOOST_TEST(*run.device_time_ns == 450);  // gemm 400 + relu 50
  BOOST_TEST(*run.device_busy_ns == 450);  // [300,700] and [800,850] do not overlap
  BOOST_TEST(*run.device_span_ns == 550);  // 850 - 300
  BOOST_TEST_REQUIRE(run.regions.size() == 1u);
  const region_aggregate* enc = find_region(r, run, "aot_module:encoder");
  BOOST_TEST_REQUIRE(enc != nullptr);
  BOOST_TEST(enc->calls == 1u);
  BOOST_TEST(enc->cpu_time_ns == 500);        // [100,600]
  BOOST_TEST(*enc->device_time_ns == 400);    // gemm, launched at 200 inside it
  BOOST_TEST(!enc->off_thread_cpu_time_ns);   // never seen off-thread
  BOOST_TEST(run.residual_cpu_ns == 500);     // 1000 - 500
  BOOST_TEST(*run.residual_device_ns == 50);  // 450 - 400: relu, launched outside the region
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(regions_metadata_and_module_type) {
  const analysis_result r = analyze_named("one_run_one_region");
  BOOST_TEST_REQUIRE(r.regions.size() == 1u);
  BOOST_TEST(r.regions[0].id == "aot_module:encoder");
  BOOST_TEST(r.regions[0].name == "encoder");
  BOOST_TEST(r.regions[0].kind == "aot_module");
  BOOST_TEST(r.regions[0].module_type == "Encoder");  // from trace::module_types
  const analysis_result other = analyze_named("nested_regions_same_kind");
  BOOST_TEST(other.regions[0].module_type == "-");  // not an adapter region
}

BOOST_AUTO_TEST_CASE(nested_regions_same_kind) {
  const analysis_result r = analyze_named("nested_regions_same_kind");
  const run_result& run = r.runs.at(0);
  // outer [100,700] owns the nested inner [200,400] and its kernel k1 (50 ns). The inner instance
  // [800,900] is topmost: 1 call, 100 ns, k2 (10 ns).
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:outer", "aot_module:inner"}), boost::test_tools::per_element());
  const region_aggregate* outer = find_region(r, run, "aot_module:outer");
  const region_aggregate* inner = find_region(r, run, "aot_module:inner");
  BOOST_TEST(outer->calls == 1u);
  BOOST_TEST(outer->cpu_time_ns == 600);
  BOOST_TEST(*outer->device_time_ns == 50);
  BOOST_TEST(inner->calls == 1u);  // the nested instance is not a call of its own
  BOOST_TEST(inner->cpu_time_ns == 100);
  BOOST_TEST(*inner->device_time_ns == 10);
  BOOST_TEST(run.residual_cpu_ns == 300);  // 1000 - 600 - 100
  BOOST_TEST(*run.residual_device_ns == 0);
  // First seen as an owner: outer at 100, inner at 800 (its nested instance at 200 owns nothing).
  BOOST_TEST(region_ids(r) == (ids{"aot_module:outer", "aot_module:inner"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(nested_regions_different_kinds) {
  const analysis_result r = analyze_named("nested_regions_different_kinds");
  const run_result& run = r.runs.at(0);
  // model [50,950] owns both block instances; head [960,990] is topmost.
  BOOST_TEST(region_ids(r, run) == (ids{"untuned_module:model", "aot_module:head"}), boost::test_tools::per_element());
  BOOST_TEST(find_region(r, run, "untuned_module:model")->cpu_time_ns == 900);
  BOOST_TEST(find_region(r, run, "untuned_module:model")->calls == 1u);
  BOOST_TEST(find_region(r, run, "aot_module:head")->cpu_time_ns == 30);
  BOOST_TEST(run.residual_cpu_ns == 70);  // 1000 - 900 - 30
  // aot_module:block never owned anything: not in the regions list.
  BOOST_TEST(region_ids(r) == (ids{"untuned_module:model", "aot_module:head"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(device_op_after_region_is_still_owned) {
  const analysis_result r = analyze_named("device_op_after_region");
  const run_result& run = r.runs.at(0);
  // k1 [500,900] runs after region a [100,200] ended; k2 [1200,1300] after the run's marker ended.
  // Both were launched inside a: run and region device time 400 + 100 = 500.
  BOOST_TEST(*run.device_time_ns == 500);
  BOOST_TEST(*find_region(r, run, "aot_module:a")->device_time_ns == 500);
  BOOST_TEST(*run.residual_device_ns == 0);
  BOOST_TEST(*run.device_busy_ns == 500);
  BOOST_TEST(*run.device_span_ns == 800);  // 1300 - 500
  BOOST_TEST(run.residual_cpu_ns == 900);
}

BOOST_AUTO_TEST_CASE(cuda_graph_ops_share_one_correlation_id) {
  const analysis_result r = analyze_named("cuda_graph");
  const run_result& run = r.runs.at(0);
  // k1 100 + k2 150 + k3 80 = 330, all launched by cudaGraphLaunch (id 5) inside region g.
  BOOST_TEST(*run.device_time_ns == 330);
  BOOST_TEST(*find_region(r, run, "aot_module:g")->device_time_ns == 330);
  BOOST_TEST(*run.device_busy_ns == 250);  // [200,300] u [300,450] u [320,400] = [200,450]
  BOOST_TEST(*run.device_span_ns == 250);
  const key_average_row* launch = find_row(r.cpu_time_total, "cudaGraphLaunch", device_type::cpu);
  BOOST_TEST_REQUIRE(launch != nullptr);
  BOOST_TEST(*launch->self_device_time_ns == 330);
  BOOST_TEST(!find_warning(r, warning_code::uncorrelated_device_ops));
}

BOOST_AUTO_TEST_CASE(unknown_correlation_ids_are_counted) {
  const analysis_result r = analyze_named("unknown_correlation");
  const run_result& run = r.runs.at(0);
  BOOST_TEST(*run.device_time_ns == 110);  // k 100 + memset 10 (two ops of launch 1)
  const warning* w = find_warning(r, warning_code::uncorrelated_device_ops);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(w->source == warning_source::core);
  BOOST_TEST(leading_count(w->message) == 2);  // orphan (id 99) + memcpy (id 0)
  BOOST_TEST(w->message.find("150 ns") != std::string::npos);  // 100 + 50
  BOOST_TEST(w->message.find("1 without a correlation id, 1 whose id") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(region_outside_any_run_is_unmapped) {
  const analysis_result r = analyze_named("region_outside_run");
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  BOOST_TEST(r.runs[0].cpu_time_ns == 800);  // [200,1000]
  BOOST_TEST(region_ids(r) == (ids{"aot_module:x"}), boost::test_tools::per_element());
  const warning* w = find_warning(r, warning_code::unmapped_region_events);
  BOOST_TEST_REQUIRE(w != nullptr);
  // setup and the inner range nested in it (2 aot_module), tail (1 untuned_module).
  BOOST_TEST(leading_count(w->message) == 3);
  BOOST_TEST(w->message.find("aot_module: 2, untuned_module: 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cross_thread_on_attributes_worker_work) {
  const analysis_result r = analyze_named("cross_thread");
  const run_result& run = r.runs.at(0);
  // Worker: bwd [250,400] is its own topmost region inside main's run [0,1000]; k1 (100 ns, launched at
  // 300 inside bwd) goes to bwd. k2 (50, launched at 450 outside bwd) goes to the region open on main at
  // 450: enc [100,600]. k3 (30, launched at 710, nothing open on main) goes to the residual. k4 was
  // launched at 1110, after the run: no run.
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:enc", "aot_module:bwd"}), boost::test_tools::per_element());
  const region_aggregate* enc = find_region(r, run, "aot_module:enc");
  const region_aggregate* bwd = find_region(r, run, "aot_module:bwd");
  BOOST_TEST(enc->calls == 1u);
  BOOST_TEST(enc->cpu_time_ns == 500);
  BOOST_TEST(*enc->device_time_ns == 50);
  BOOST_TEST(!enc->off_thread_cpu_time_ns);
  BOOST_TEST(bwd->calls == 0u);        // seen only off-thread
  BOOST_TEST(bwd->cpu_time_ns == 0);   // the CPU domain stays the marker thread's
  BOOST_TEST(*bwd->off_thread_cpu_time_ns == 150);
  BOOST_TEST(*bwd->device_time_ns == 100);
  BOOST_TEST(*run.device_time_ns == 180);  // 100 + 50 + 30
  BOOST_TEST(*run.residual_device_ns == 30);
  BOOST_TEST(run.residual_cpu_ns == 500);  // 1000 - 500: bwd adds no CPU time
  BOOST_TEST(!find_warning(r, warning_code::off_thread_events));
  BOOST_TEST(!find_warning(r, warning_code::unmapped_region_events));
  // Off-thread events count in the key averages: autograd::engine [200,500] once.
  const key_average_row* engine_row = find_row(r.cpu_time_total, "autograd::engine", device_type::cpu);
  BOOST_TEST_REQUIRE(engine_row != nullptr);
  BOOST_TEST(engine_row->cpu_time_total_ns == 300);
  // Its children are bwd [250,400] and launch 2 [450,460] (launch 1 is bwd's child): 300 - 150 - 10.
  BOOST_TEST(engine_row->self_cpu_time_ns == 140);
  BOOST_TEST(*engine_row->device_time_total_ns == 150);  // k1 100 + k2 50
}

BOOST_AUTO_TEST_CASE(cross_thread_off_counts_off_thread_events) {
  const analysis_result r = analyze_named("off_thread_events");
  const run_result& run = r.runs.at(0);
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:enc"}), boost::test_tools::per_element());
  BOOST_TEST(*run.device_time_ns == 0);  // every launch was on the worker
  BOOST_TEST(*find_region(r, run, "aot_module:enc")->device_time_ns == 0);
  const warning* w = find_warning(r, warning_code::off_thread_events);
  BOOST_TEST_REQUIRE(w != nullptr);
  // engine, bwd, launch 1, launch 2, loader, launch 3 start inside [0,1000]; late and launch 4 do not.
  BOOST_TEST(leading_count(w->message) == 6);
  BOOST_TEST(w->message.find("and 3 device op(s)") != std::string::npos);  // k1, k2, k3
  BOOST_TEST(w->message.find("tid 2 'worker'") != std::string::npos);
  BOOST_TEST(w->message.find("cross_thread") != std::string::npos);
  // bwd is off-thread work, not an unmapped region.
  BOOST_TEST(!find_warning(r, warning_code::unmapped_region_events));
}

BOOST_AUTO_TEST_CASE(cross_thread_nested_off_thread_regions_use_the_topmost) {
  // Worker: aot_module:outer [100,500] holds aot_module:inner [200,300] with a launch at 250.
  trace_builder b;
  b.thread(1).marker(0, 1000);
  b.thread(2).range("aot_module:outer", 100, 500).range("aot_module:inner", 200, 300).launch(250, 260, 1);
  b.kernel("k", 270, 290, 1);
  analysis_options options;
  options.cross_thread = true;
  const analysis_result r = analyze(b.get(), options);
  const run_result& run = r.runs.at(0);
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:outer"}), boost::test_tools::per_element());
  BOOST_TEST(*find_region(r, run, "aot_module:outer")->off_thread_cpu_time_ns == 400);
  BOOST_TEST(*find_region(r, run, "aot_module:outer")->device_time_ns == 20);
  BOOST_TEST(run.residual_cpu_ns == 1000);
}

BOOST_AUTO_TEST_CASE(no_device_data_leaves_device_fields_absent) {
  const analysis_result r = analyze_named("no_device_data");
  BOOST_TEST(!r.has_device_data);
  const run_result& run = r.runs.at(0);
  BOOST_TEST(!run.device_time_ns);
  BOOST_TEST(!run.device_busy_ns);
  BOOST_TEST(!run.device_span_ns);
  BOOST_TEST(!run.residual_device_ns);
  BOOST_TEST(!run.regions.at(0).device_time_ns);
  BOOST_TEST(run.regions.at(0).cpu_time_ns == 300);
  BOOST_TEST(!r.device_time_total);
  for (const key_average_row& row : r.cpu_time_total.rows) {
    BOOST_TEST(!row.self_device_time_ns);
    BOOST_TEST(!row.device_time_total_ns);
  }
}

BOOST_AUTO_TEST_CASE(zero_length_run) {
  const analysis_result r = analyze_named("zero_length_run");
  const run_result& run = r.runs.at(0);
  BOOST_TEST(run.cpu_time_ns == 0);
  BOOST_TEST(run.wall_time_ns == 0);
  BOOST_TEST(run.residual_cpu_ns == 0);
  const region_aggregate* z = find_region(r, run, "aot_module:z");
  BOOST_TEST_REQUIRE(z != nullptr);  // [500,500] is inside [500,500]
  BOOST_TEST(z->calls == 1u);
  BOOST_TEST(z->cpu_time_ns == 0);
  // Device tracing was on: device fields present, zero.
  BOOST_TEST(*run.device_time_ns == 0);
  BOOST_TEST(*run.device_busy_ns == 0);
  BOOST_TEST(*run.device_span_ns == 0);
  BOOST_TEST(*run.residual_device_ns == 0);
  BOOST_TEST(*z->device_time_ns == 0);
}

BOOST_AUTO_TEST_CASE(overlapping_ranges_are_clipped) {
  const analysis_result r = analyze_named("overlapping_ranges");
  const run_result& run = r.runs.at(0);
  // b [300,600] starts inside a [100,400] and ends after it: clipped to [300,400], nested under a, so a
  // is the only region (without clipping b would be a second topmost region of 300 ns).
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:a"}), boost::test_tools::per_element());
  BOOST_TEST(find_region(r, run, "aot_module:a")->cpu_time_ns == 300);
  BOOST_TEST(run.residual_cpu_ns == 700);
  // Clipped ends are used everywhere after: y [350,500] -> [350,400] (inside b's clipped end),
  // x [900,1100] -> [900,1000] (the marker's end).
  const key_average_view& v = r.cpu_time_total;
  BOOST_TEST(find_row(v, "aot_module:b", device_type::cpu)->cpu_time_total_ns == 100);
  BOOST_TEST(find_row(v, "aot_module:b", device_type::cpu)->self_cpu_time_ns == 50);  // 100 - y 50
  BOOST_TEST(find_row(v, "y", device_type::cpu)->cpu_time_total_ns == 50);
  BOOST_TEST(find_row(v, "x", device_type::cpu)->cpu_time_total_ns == 100);
  BOOST_TEST(find_row(v, "aot_module:a", device_type::cpu)->self_cpu_time_ns == 200);  // 300 - 100
  // Marker: 1000 - a 300 - x 100 = 600 self.
  BOOST_TEST(find_row(v, "regionprof.profiled_run", device_type::cpu)->self_cpu_time_ns == 600);
}

BOOST_AUTO_TEST_CASE(overlapping_ranges_warning) {
  const analysis_result r = analyze_named("overlapping_ranges");
  const warning* w = find_warning(r, warning_code::overlapping_ranges);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(leading_count(w->message) == 3);  // b, y, x
  BOOST_TEST(w->message.find("'aot_module:b' inside 'aot_module:a' on tid 1 'main'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(busy_sum_union_and_span_on_concurrent_streams) {
  const analysis_result r = analyze_named("concurrent_streams");
  const run_result& run = r.runs.at(0);
  // A [200,600] on stream 7, B [300,500] on stream 8, C [700,800] on stream 7.
  BOOST_TEST(*run.device_time_ns == 700);  // busy-sum 400 + 200 + 100 double-counts B
  BOOST_TEST(*run.device_busy_ns == 500);  // union [200,600] u [700,800]
  BOOST_TEST(*run.device_span_ns == 600);  // 800 - 200
}

BOOST_AUTO_TEST_CASE(device_figures_do_not_depend_on_input_order) {
  named_trace t = test_trace("concurrent_streams");
  std::reverse(t.value.device_ops.begin(), t.value.device_ops.end());  // C, B, A: not in start order
  std::reverse(t.value.intervals.begin(), t.value.intervals.end());    // children before parents
  const analysis_result r = analyze(t.value, t.options);
  const run_result& run = r.runs.at(0);
  BOOST_TEST(*run.device_time_ns == 700);
  BOOST_TEST(*run.device_busy_ns == 500);
  BOOST_TEST(*run.device_span_ns == 600);
}

BOOST_AUTO_TEST_CASE(skip_runs_discards_the_first_markers) {
  const analysis_result r = analyze_named("skip_runs");
  BOOST_TEST_REQUIRE(r.runs.size() == 2u);
  // Marker [0,100] is skipped; runs are [200,300] and [400,500].
  BOOST_TEST(r.runs[0].run_index == 0u);
  BOOST_TEST(r.runs[0].cpu_time_ns == 100);
  BOOST_TEST(r.runs[0].wall_time_ns == 150);  // harness wall times match the measured runs
  BOOST_TEST(find_region(r, r.runs[0], "aot_module:r")->cpu_time_ns == 20);  // [210,230]
  BOOST_TEST(r.runs[1].wall_time_ns == 120);
  BOOST_TEST(find_region(r, r.runs[1], "aot_module:r")->cpu_time_ns == 70);  // [420,490]
  // The skipped run's region and the worker's op inside it raise nothing.
  BOOST_TEST(r.warnings.empty());
  BOOST_TEST(find_row(r.cpu_time_total, "regionprof.profiled_run", device_type::cpu)->count == 2u);
  BOOST_TEST(!find_row(r.cpu_time_total, "w", device_type::cpu));
}

BOOST_AUTO_TEST_CASE(skipping_every_marker_leaves_no_run) {
  named_trace t = test_trace("skip_runs");
  t.options.skip_runs = 3;
  const analysis_result r = analyze(t.value, t.options);
  BOOST_TEST(r.runs.empty());
  BOOST_TEST(r.regions.empty());
  BOOST_TEST(r.cpu_time_total.rows.empty());
  // All 3 markers skipped, and 2 harness wall times for 0 runs.
  BOOST_TEST(count_warnings(r, warning_code::run_count_mismatch) == 2u);
  BOOST_TEST(leading_count(find_warning(r, warning_code::run_count_mismatch)->message) == 3);
  BOOST_TEST(!find_warning(r, warning_code::no_run_markers));
}

BOOST_AUTO_TEST_CASE(wall_time_count_mismatch_is_reported) {
  named_trace t = test_trace("one_run_one_region");
  t.value.run_wall_times_ns = {2000, 3000};  // two wall times, one run
  const analysis_result r = analyze(t.value, t.options);
  BOOST_TEST(r.runs.at(0).wall_time_ns == 2000);
  const warning* w = find_warning(r, warning_code::run_count_mismatch);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(w->message.find("2 harness wall time(s) but 1 run(s)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_markers_gives_one_synthetic_run) {
  const analysis_result r = analyze_named("no_markers");
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  // Main has 4 intervals (the most): span [100,450] = 350.
  const run_result& run = r.runs[0];
  BOOST_TEST(run.cpu_time_ns == 350);
  BOOST_TEST(find_region(r, run, "aot_module:m")->cpu_time_ns == 90);  // [310,400]
  BOOST_TEST(run.residual_cpu_ns == 260);
  const warning* w = find_warning(r, warning_code::no_run_markers);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(w->message.find("tid 1 'main'") != std::string::npos);
  BOOST_TEST(w->message.find("350 ns") != std::string::npos);
  // The worker follows rule 9: w [120,130] starts inside the span (counted), late [500,600] does not.
  const warning* off = find_warning(r, warning_code::off_thread_events);
  BOOST_TEST_REQUIRE(off != nullptr);
  BOOST_TEST(leading_count(off->message) == 1);
  // Every main-thread interval is an event of the run: a, b, c, m.
  BOOST_TEST(find_row(r.cpu_time_total, "a", device_type::cpu)->self_cpu_time_ns == 70);  // 100 - 30
  // NO_RUN_MARKERS comes first among the analysis's warnings.
  BOOST_TEST((r.warnings.front().code == warning_code::no_run_markers));
}

BOOST_AUTO_TEST_CASE(no_markers_tie_takes_the_lowest_thread) {
  trace_builder b;
  b.thread(5).cpu_op("five", 0, 100).cpu_op("five_b", 200, 250);
  b.thread(3).cpu_op("three", 50, 60).cpu_op("three_b", 70, 500);
  analysis_options options;
  options.cross_thread = true;
  const analysis_result r = analyze(b.get(), options);
  // Two intervals each: thread index 0 (tid 5) wins; span [0,250].
  BOOST_TEST(r.runs.at(0).cpu_time_ns == 250);
  // With cross_thread, tid 3's intervals starting inside [0,250] are events of the run.
  BOOST_TEST(find_row(r.cpu_time_total, "three", device_type::cpu)->count == 1u);
  BOOST_TEST(find_row(r.cpu_time_total, "three_b", device_type::cpu)->cpu_time_total_ns == 430);
}

BOOST_AUTO_TEST_CASE(empty_trace) {
  const trace t;
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST(r.runs.empty());
  BOOST_TEST(!r.has_device_data);
  BOOST_TEST(r.cpu_time_total.rows.empty());
  BOOST_TEST(count_warnings(r, warning_code::no_run_markers) == 1u);
}

BOOST_AUTO_TEST_CASE(clock_anomaly_is_counted) {
  const analysis_result r = analyze_named("clock_anomaly");
  const warning* w = find_warning(r, warning_code::clock_anomaly);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(w->source == warning_source::core);
  BOOST_TEST(leading_count(w->message) == 1);  // early [90,150] before its launch at 100
  BOOST_TEST(w->message.find("10 ns") != std::string::npos);
  // Attribution by correlation id is unaffected: 60 + 95.
  BOOST_TEST(*r.runs.at(0).device_time_ns == 155);
}

BOOST_AUTO_TEST_CASE(equal_intervals_tie_break) {
  const analysis_result r = analyze_named("equal_intervals");
  const run_result& run = r.runs.at(0);
  // first and second are equal: the earlier (first) is the parent. short [300,350] and long [300,400]
  // start together: the longer is the parent, whatever the input order.
  BOOST_TEST(region_ids(r, run) == (ids{"aot_module:first", "aot_module:long"}), boost::test_tools::per_element());
  BOOST_TEST(find_region(r, run, "aot_module:first")->cpu_time_ns == 100);
  BOOST_TEST(find_region(r, run, "aot_module:long")->cpu_time_ns == 100);
  BOOST_TEST(run.residual_cpu_ns == 800);
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(nested_marker_is_not_a_run) {
  const analysis_result r = analyze_named("nested_markers");
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  const run_result& run = r.runs[0];
  BOOST_TEST(run.cpu_time_ns == 1000);
  // a [150,180] sits in the nested marker: the enclosing run owns it as a topmost region.
  BOOST_TEST(find_region(r, run, "aot_module:a")->cpu_time_ns == 30);
  const warning* w = find_warning(r, warning_code::run_count_mismatch);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(leading_count(w->message) == 1);
  // Both markers are events of the run: total 1000 + 100, self (1000 - 100) + (100 - 30) = 970.
  const key_average_row* m = find_row(r.cpu_time_total, "regionprof.profiled_run", device_type::cpu);
  BOOST_TEST(m->count == 2u);
  BOOST_TEST(m->cpu_time_total_ns == 1100);
  BOOST_TEST(m->self_cpu_time_ns == 970);
}

BOOST_AUTO_TEST_CASE(markers_on_two_threads_are_ordered_in_time) {
  const analysis_result r = analyze_named("markers_on_two_threads");
  BOOST_TEST_REQUIRE(r.runs.size() == 3u);
  // main [0,100], worker [150,250], main [300,400].
  BOOST_TEST(find_region(r, r.runs[0], "aot_module:a")->cpu_time_ns == 40);
  BOOST_TEST(find_region(r, r.runs[1], "aot_module:b")->cpu_time_ns == 40);
  BOOST_TEST(find_region(r, r.runs[2], "aot_module:a")->cpu_time_ns == 20);
  BOOST_TEST(region_ids(r) == (ids{"aot_module:a", "aot_module:b"}), boost::test_tools::per_element());
  // helper [20,30] on the worker is inside main's first run: off-thread (cross_thread off).
  BOOST_TEST(leading_count(find_warning(r, warning_code::off_thread_events)->message) == 1);
}

BOOST_AUTO_TEST_CASE(markers_on_two_threads_with_skip_runs) {
  named_trace t = test_trace("markers_on_two_threads");
  t.options.skip_runs = 1;
  t.options.cross_thread = true;
  const analysis_result r = analyze(t.value, t.options);
  BOOST_TEST_REQUIRE(r.runs.size() == 2u);
  BOOST_TEST(find_region(r, r.runs[0], "aot_module:b")->cpu_time_ns == 40);  // the worker's marker
  BOOST_TEST(find_region(r, r.runs[1], "aot_module:a")->cpu_time_ns == 20);
  // helper is inside the skipped run: no run, no warning.
  BOOST_TEST(!find_row(r.cpu_time_total, "helper", device_type::cpu));
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(trace_warnings_come_first) {
  named_trace t = test_trace("clock_anomaly");
  t.value.warnings.push_back({warning_code::dropped_host_records, warning_source::nvtx, "12 records dropped"});
  const analysis_result r = analyze(t.value, t.options);
  BOOST_TEST_REQUIRE(r.warnings.size() == 2u);
  BOOST_TEST((r.warnings[0].code == warning_code::dropped_host_records));
  BOOST_TEST((r.warnings[0].source == warning_source::nvtx));
  BOOST_TEST((r.warnings[1].code == warning_code::clock_anomaly));
}

BOOST_AUTO_TEST_CASE(sparse_correlation_ids) {
  // Ids far apart take the sorted (binary search) form of the correlation index.
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 0, 500).launch(10, 20, 4'000'000'000u).launch(600, 610, 7);
  b.kernel("k1", 30, 40, 4'000'000'000u).kernel("k2", 620, 700, 7).kernel("lost", 800, 810, 8);
  const analysis_result r = analyze(b.get(), analysis_options{});
  BOOST_TEST(*r.runs.at(0).device_time_ns == 90);  // 10 + 80
  BOOST_TEST(*find_region(r, r.runs[0], "aot_module:a")->device_time_ns == 10);
  BOOST_TEST(leading_count(find_warning(r, warning_code::uncorrelated_device_ops)->message) == 1);
}

BOOST_AUTO_TEST_CASE(duplicate_correlation_id_goes_to_the_first_call) {
  trace_builder b;
  b.thread(1).marker(0, 1000).range("aot_module:a", 0, 100).range("aot_module:b", 200, 300);
  b.launch(210, 220, 3);  // first in input order
  b.launch(10, 20, 3);    // same id, later in input order, earlier in time
  b.kernel("k", 400, 450, 3);
  const analysis_result r = analyze(b.get(), analysis_options{});
  BOOST_TEST(*find_region(r, r.runs.at(0), "aot_module:b")->device_time_ns == 50);
  BOOST_TEST(*find_region(r, r.runs.at(0), "aot_module:a")->device_time_ns == 0);
  BOOST_TEST(count_warnings(r, warning_code::duplicate_correlation_ids) == 1u);
  BOOST_TEST(leading_count(find_warning(r, warning_code::duplicate_correlation_ids)->message) == 1);
}

BOOST_AUTO_TEST_CASE(run_marker_rule_domain_filter) {
  // The default marker rule matches its name in any domain: a range in domain "elsewhere" is a run too.
  trace_builder b;
  b.thread(1).range("regionprof.profiled_run", 0, 100, "elsewhere").marker(200, 300);
  BOOST_TEST(analyze(b.get(), analysis_options{}).runs.size() == 2u);
  // A rule with a domain wants that domain: only the marker in domain "regionprof" is a run.
  analysis_options only_regionprof;
  only_regionprof.run_marker.domain = "regionprof";
  const analysis_result r = analyze(b.get(), only_regionprof);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  BOOST_TEST(r.runs[0].cpu_time_ns == 100);
}

BOOST_AUTO_TEST_CASE(inverted_interval_counts_as_zero_length) {
  // end < start breaks the trace invariant; the analysis reads it as [start,start] and does not crash.
  trace_builder b;
  b.thread(1).marker(0, 100).range("aot_module:bad", 50, 40);
  const analysis_result r = analyze(b.get(), analysis_options{});
  BOOST_TEST(find_region(r, r.runs.at(0), "aot_module:bad")->cpu_time_ns == 0);
  BOOST_TEST(r.runs[0].residual_cpu_ns == 100);
}

BOOST_AUTO_TEST_SUITE_END()
