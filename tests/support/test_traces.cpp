#include "support/test_traces.hpp"

#include <stdexcept>
#include <utility>

#include "support/trace_builder.hpp"

namespace regionprof::test {

namespace {

named_trace make(std::string name, std::string description, const trace_builder& builder,
                 analysis_options options = {}) {
  return {std::move(name), std::move(description), builder.build(), std::move(options)};
}

analysis_options with_cross_thread(bool on) {
  analysis_options options;
  options.cross_thread = on;
  return options;
}

// Tid 1 is "main", tid 2 "worker"; times in ns. Each layout is drawn as nesting by indentation.

trace_builder one_run_one_region() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:encoder", 100, 600)  // region
      .cpu_op("aten::linear", 150, 550)       //   op
      .launch(200, 260, 1)                    //     launch -> gemm
      .launch(700, 720, 2)                    // launch -> relu (no region)
      .kernel("gemm", 300, 700, 1)
      .kernel("relu", 800, 850, 2)
      .module_type("aot_module:encoder", "Encoder");
  return b;
}

trace_builder nested_regions_same_kind() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:outer", 100, 700)
      .range("aot_module:inner", 200, 400)  // nested: owned by outer
      .launch(250, 260, 1)
      .range("aot_module:inner", 800, 900)  // topmost this time
      .launch(810, 820, 2)
      .kernel("k1", 300, 350, 1)
      .kernel("k2", 830, 840, 2);
  return b;
}

trace_builder nested_regions_different_kinds() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("untuned_module:model", 50, 950)
      .range("aot_module:block", 100, 500)  // nested under another kind: still not aggregated
      .range("aot_module:block", 600, 700)
      .range("aot_module:head", 960, 990);  // topmost
  return b;
}

trace_builder device_op_after_region() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:a", 100, 200)
      .launch(120, 130, 1)
      .launch(150, 160, 2)
      .kernel("k1", 500, 900, 1)     // after the region's CPU range ended
      .kernel("k2", 1200, 1300, 2);  // after the run's marker ended
  return b;
}

trace_builder cuda_graph() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:g", 100, 300)
      .api("cudaGraphLaunch", 150, 170, 5)
      .kernel("k1", 200, 300, 5, 7)
      .kernel("k2", 300, 450, 5, 7)
      .kernel("k3", 320, 400, 5, 8);
  return b;
}

trace_builder unknown_correlation() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .launch(100, 110, 1)
      .kernel("k", 200, 300, 1)
      .memset("Memset (Device)", 310, 320, 1, 256)
      .kernel("orphan", 400, 500, 99)                      // no API call carries 99
      .memcpy("Memcpy HtoD (Pageable -> Device)", 600, 650, 0, 4096);  // no correlation id
  return b;
}

trace_builder region_outside_run() {
  trace_builder b;
  b.thread(1, "main")
      .range("aot_module:setup", 0, 100)
      .range("aot_module:inner", 10, 20)
      .marker(200, 1000)
      .range("aot_module:x", 300, 400)
      .range("untuned_module:tail", 1100, 1200);
  return b;
}

trace_builder off_thread() {
  trace_builder b;
  b.thread(1, "main").marker(0, 1000).range("aot_module:enc", 100, 600);
  b.thread(2, "worker")
      .cpu_op("autograd::engine", 200, 500)
      .range("aot_module:bwd", 250, 400)
      .launch(300, 310, 1)
      .launch(450, 460, 2)  // in the engine, outside bwd: main's enc is open at 450
      .cpu_op("loader", 700, 800)
      .launch(710, 720, 3)  // nothing open on main at 710: residual
      .cpu_op("late", 1100, 1200)
      .launch(1110, 1120, 4)  // after the run
      .kernel("k1", 320, 420, 1, 8)
      .kernel("k2", 470, 520, 2, 8)
      .kernel("k3", 730, 760, 3, 8)
      .kernel("k4", 1130, 1140, 4, 8);
  return b;
}

trace_builder no_device_data() {
  trace_builder b;
  b.thread(1, "main").marker(0, 1000).range("aot_module:a", 100, 400).cpu_op("aten::add", 150, 200);
  return b;
}

trace_builder zero_length_run() {
  trace_builder b;
  b.thread(1, "main").marker(500, 500).range("aot_module:z", 500, 500).device_tracing(true);
  return b;
}

trace_builder overlapping_ranges() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:a", 100, 400)
      .range("aot_module:b", 300, 600)  // ends after a: clipped to 400, nested under a
      .cpu_op("y", 350, 500)            // ends after b's clipped end: clipped to 400
      .cpu_op("x", 900, 1100);          // ends after the marker: clipped to 1000
  return b;
}

trace_builder concurrent_streams() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .launch(100, 110, 1)
      .launch(120, 130, 2)
      .launch(140, 150, 3)
      .kernel("A", 200, 600, 1, 7)
      .kernel("B", 300, 500, 2, 8)
      .kernel("C", 700, 800, 3, 7);
  return b;
}

trace_builder key_averages() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:L", 100, 500)
      .cpu_op("aten::linear", 110, 400)
      .cpu_op("aten::addmm", 120, 300)
      .launch(130, 140, 1)
      .launch(310, 320, 2)
      .cpu_op("aten::relu", 410, 480)
      .launch(420, 430, 3)
      .marker(2000, 2600)
      .cpu_op("aten::linear", 2100, 2300)
      .cpu_op("aten::addmm", 2110, 2250)
      .launch(2120, 2130, 4)
      .cpu_op("aten::linear", 3000, 3100)  // outside every run: not in the key averages
      .kernel("gemm", 150, 350, 1)
      .kernel("bias", 360, 380, 2)
      .kernel("relu_k", 490, 500, 3)
      .kernel("gemm", 2140, 2240, 4);
  return b;
}

trace_builder skip_runs() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 100)  // warm-up: skipped
      .range("aot_module:r", 10, 60)
      .marker(200, 300)
      .range("aot_module:r", 210, 230)
      .marker(400, 500)
      .range("aot_module:r", 420, 490)
      .wall_times({150, 120});
  b.thread(2, "worker").cpu_op("w", 20, 40);  // inside the skipped run: no warning
  return b;
}

trace_builder no_markers() {
  trace_builder b;
  b.thread(1, "main")
      .cpu_op("a", 100, 200)
      .cpu_op("b", 150, 180)
      .cpu_op("c", 300, 450)
      .range("aot_module:m", 310, 400);
  b.thread(2, "worker").cpu_op("w", 120, 130).cpu_op("late", 500, 600);
  return b;
}

trace_builder regex_rules() {
  trace_builder b;
  b.thread(1, "main")
      .range("ProfilerStep#1", 0, 1000)
      .range("## forward ##", 100, 500)
      .python_function("layer_3", 600, 700)
      .range("block.7", 800, 900, "model")
      .range("block.8", 910, 950, "other")  // the block rule wants domain "model"
      .range("ProfilerStep#2", 1000, 2000)  // starts at the first one's end: a run of its own
      .range("## backward ##", 1100, 1500)
      .cpu_op("layer_12", 1600, 1700)
      .cpu_op("conv", 1750, 1800)
      .api("conv", 1850, 1860, 1);  // API calls never match a rule
  return b;
}

analysis_options regex_rules_options() {
  analysis_options options;
  options.run_marker = {match_kind::regex, "ProfilerStep#\\d+", "run", ""};
  options.region_rules = {
      {match_kind::regex, "## (.*) ##", "phase", ""},     // capture group -> phase:forward
      {match_kind::regex, "layer_\\d+", "layer", ""},     // no group -> layer:layer_3
      {match_kind::prefix, "block.", "block", "model"},   // prefix remainder, domain filter -> block:7
      {match_kind::exact, "conv", "op", ""},              // exact -> op:conv
      {match_kind::regex, "layer_(\\d+)", "late", ""},    // never wins: the layer rule comes first
  };
  return options;
}

trace_builder clock_anomaly() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .launch(100, 110, 1)
      .launch(200, 210, 2)
      .kernel("early", 90, 150, 1)  // starts 10 ns before its launch
      .kernel("fine", 205, 300, 2);
  return b;
}

trace_builder equal_intervals() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 1000)
      .range("aot_module:first", 100, 200)
      .range("aot_module:second", 100, 200)  // equal: the earlier one is the parent
      .range("aot_module:short", 300, 350)
      .range("aot_module:long", 300, 400);  // equal start: the longer one is the parent
  return b;
}

trace_builder nested_markers() {
  trace_builder b;
  b.thread(1, "main").marker(0, 1000).marker(100, 200).range("aot_module:a", 150, 180);
  return b;
}

trace_builder markers_on_two_threads() {
  trace_builder b;
  b.thread(1, "main")
      .marker(0, 100)
      .range("aot_module:a", 10, 50)
      .marker(300, 400)
      .range("aot_module:a", 310, 330);
  b.thread(2, "worker")
      .cpu_op("helper", 20, 30)  // inside main's first run: off-thread work
      .marker(150, 250)
      .range("aot_module:b", 160, 200);
  return b;
}

}  // namespace

std::vector<named_trace> test_traces() {
  std::vector<named_trace> all;
  all.push_back(make("one_run_one_region", "one run, one region, a launch inside and one outside it",
                     one_run_one_region()));
  all.push_back(make("nested_regions_same_kind", "aot_module inside aot_module: the topmost owns",
                     nested_regions_same_kind()));
  all.push_back(make("nested_regions_different_kinds", "aot_module inside untuned_module: the topmost owns",
                     nested_regions_different_kinds()));
  all.push_back(make("device_op_after_region", "kernels that run after their region and their run ended",
                     device_op_after_region()));
  all.push_back(make("cuda_graph", "one graph launch, three kernels with its correlation id", cuda_graph()));
  all.push_back(make("unknown_correlation", "device ops with correlation id 0 and with an id no call has",
                     unknown_correlation()));
  all.push_back(make("region_outside_run", "region ranges before and after the run marker", region_outside_run()));
  all.push_back(make("cross_thread", "worker-thread work inside main's run, cross_thread on", off_thread(),
                     with_cross_thread(true)));
  all.push_back(make("off_thread_events", "worker-thread work inside main's run, cross_thread off", off_thread(),
                     with_cross_thread(false)));
  all.push_back(make("no_device_data", "CPU only, device tracing off", no_device_data()));
  all.push_back(make("zero_length_run", "a run marker of zero duration, device tracing on without ops",
                     zero_length_run()));
  all.push_back(make("overlapping_ranges", "ranges that end after their parent: clipped", overlapping_ranges()));
  all.push_back(make("concurrent_streams", "kernels on two streams at once: busy-sum, union, span",
                     concurrent_streams()));
  all.push_back(make("key_averages", "two runs of nested ops and launches", key_averages()));
  analysis_options skip;
  skip.skip_runs = 1;
  all.push_back(make("skip_runs", "three markers, the first one a warm-up", skip_runs(), skip));
  all.push_back(make("no_markers", "no run marker: one synthetic run over the busiest thread", no_markers()));
  all.push_back(make("regex_rules", "regex marker, regex/prefix/exact region rules, domain filter",
                     regex_rules(), regex_rules_options()));
  all.push_back(make("clock_anomaly", "a kernel that starts before its launch", clock_anomaly()));
  all.push_back(make("equal_intervals", "equal intervals and equal starts: rule 1's tie-breaks",
                     equal_intervals()));
  all.push_back(make("nested_markers", "a run marker inside another one", nested_markers()));
  all.push_back(make("markers_on_two_threads", "runs from markers on two threads, in time order",
                     markers_on_two_threads()));
  return all;
}

named_trace test_trace(std::string_view name) {
  for (named_trace& t : test_traces()) {
    if (t.name == name) return std::move(t);
  }
  throw std::out_of_range("no test trace named '" + std::string(name) + "'");
}

trace declared_work_trace(bool device) {
  trace_builder b;
  b.thread(1).marker(0, 1000);
  b.range("aot_module:copy", 100, 300).work({.bytes = 1000, .flops = 4000});
  b.range("aot_module:inner", 120, 140).work({.bytes = 99});
  if (device) b.launch(150, 160, 1).kernel("copy_kernel", 300, 550, 1);
  b.range("aot_module:copy", 400, 500).work({.bytes = 500});
  b.range("aot_module:idle", 600, 600).work({.items = 7});
  b.marker(2000, 3000).range("aot_module:copy", 2100, 2700).work({.bytes = 1500});
  if (device) b.launch(2150, 2160, 2).kernel("copy_kernel", 2200, 2700, 2);
  b.marker(4000, 5000).range("aot_module:copy", 4100, 4200).work({.bytes = 1000});
  if (device) b.device_tracing();
  return b.build();
}

}  // namespace regionprof::test
