// The collector on a real GPU (ctest label `gpu`). Without a driver or device every case prints why and
// exits 77, which ctest reports as skipped.
#define BOOST_TEST_MODULE regionprof collect gpu
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "gpu_work.hpp"
#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/collect/device_session.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.hpp"
#include "regionprof/trace/clock.hpp"
#include "regionprof/trace/trace.hpp"
#include "support/warning_queries.hpp"

using namespace regionprof;
using regionprof::test::has_warning;

namespace {

/// Skips the case (exit 77, reason printed) unless a device can be traced.
void require_device() {
  const auto probe = make_device_session();
  if (!probe->available()) {
    std::printf("skipped: no GPU to trace: %s\n", probe->unavailable_reason().c_str());
    std::fflush(stdout);
    std::exit(77);
  }
  if (regionprof_gpu_device_count() == 0) {
    std::printf("skipped: the CUDA runtime sees no device\n");
    std::fflush(stdout);
    std::exit(77);
  }
}

std::string name_of(const trace& t, name_id id) { return std::string(t.strings.view(id)); }

/// The API call interval carrying each correlation id.
std::map<std::uint32_t, const cpu_interval*> launches(const trace& t) {
  std::map<std::uint32_t, const cpu_interval*> found;
  for (const cpu_interval& interval : t.intervals) {
    if (is_api_call(interval.kind) && interval.correlation_id != 0) found[interval.correlation_id] = &interval;
  }
  return found;
}

void print_warnings(const trace& t) {
  for (const warning& w : t.warnings) std::printf("  warning %s: %s\n", std::string(to_string(w.code)).c_str(), w.message.c_str());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_gpu)

BOOST_AUTO_TEST_CASE(a_pipeline_is_recorded_on_one_clock_with_every_op_owned_by_its_launch) {
  require_device();
  auto session = make_device_session();
  session->start();
  const std::int64_t window_start = monotonic_now_ns();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_pipeline(), 0);
  session->synchronize();
  const std::int64_t window_end = monotonic_now_ns();
  trace t;
  session->stop(t);
  print_warnings(t);
  BOOST_TEST(t.device_tracing);
  BOOST_TEST(!has_warning(t, warning_code::dropped_device_records));

  const auto by_correlation = launches(t);
  std::map<std::string, std::vector<const device_op*>> ops;
  for (const device_op& op : t.device_ops) ops[name_of(t, op.name)].push_back(&op);
  for (const auto& [name, list] : ops) std::printf("  %zu x %s\n", list.size(), name.c_str());

  BOOST_TEST(ops["rp_scale(float*, int)"].size() == 1u);
  BOOST_TEST(ops["rp_offset(float*, int, float)"].size() == 1u);
  BOOST_TEST(ops["rp_graph_node(float*, int)"].size() == 2u);
  BOOST_TEST(ops["rp_graph_tail(float*, int)"].size() == 1u);
  BOOST_REQUIRE_EQUAL(ops["Memcpy HtoD (Pageable -> Device)"].size(), 1u);
  BOOST_TEST(ops["Memcpy HtoD (Pageable -> Device)"][0]->bytes == (1u << 20));
  BOOST_REQUIRE_EQUAL(ops["Memset (Device)"].size(), 1u);
  BOOST_TEST(ops["Memset (Device)"][0]->bytes == (256u << 10));
  BOOST_TEST(ops["rp_scale(float*, int)"].at(0)->stream != ops["rp_offset(float*, int, float)"].at(0)->stream);

  // Every op is owned by the API call that launched it, on this thread; the graph's kernels by one launch.
  const std::int64_t pid = getpid();
  const std::int64_t tid = static_cast<std::int64_t>(syscall(SYS_gettid));
  std::int64_t worst_skew = 0;
  for (const device_op& op : t.device_ops) {
    const auto launch = by_correlation.find(op.correlation_id);
    BOOST_REQUIRE_MESSAGE(launch != by_correlation.end(), name_of(t, op.name) << " has no launching call");
    const cpu_interval& call = *launch->second;
    BOOST_TEST(t.threads[call.thread].pid == pid);
    BOOST_TEST(t.threads[call.thread].tid == tid);
    worst_skew = std::max(worst_skew, call.start_ns - op.start_ns);
    BOOST_TEST(op.start_ns <= op.end_ns);
    BOOST_TEST(op.start_ns >= window_start);
    BOOST_TEST(op.end_ns <= window_end);
  }
  std::printf("  worst launch-before-op skew: %lld ns (negative: ops start after their launch)\n",
              static_cast<long long>(worst_skew));
  BOOST_TEST(worst_skew <= 0);  // one clock: no op starts before the call that launched it
  const std::uint32_t graph = ops["rp_graph_tail(float*, int)"].at(0)->correlation_id;
  for (const device_op* node : ops["rp_graph_node(float*, int)"]) BOOST_TEST(node->correlation_id == graph);
  BOOST_TEST(name_of(t, by_correlation.at(graph)->name) == "cudaGraphLaunch");
  BOOST_TEST(name_of(t, by_correlation.at(ops["rp_scale(float*, int)"][0]->correlation_id)->name) ==
             "cudaLaunchKernel");
  BOOST_TEST(name_of(t, by_correlation.at(ops["Memcpy HtoD (Pageable -> Device)"][0]->correlation_id)->name) ==
             "cudaMemcpyAsync");
}

BOOST_AUTO_TEST_CASE(a_full_pool_drops_records_and_says_how_much_would_suffice) {
  require_device();
  device_options small;
  small.buffer_bytes = 64 << 10;
  small.max_buffer_bytes = 128 << 10;  // ~500 launches fit; 5000 do not
  auto session = make_device_session(small);
  session->start();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_launch_loop(5000), 0);
  trace t;
  session->stop(t);
  print_warnings(t);
  std::printf("  %zu device ops, %zu intervals recorded of 5000 launches\n", t.device_ops.size(), t.intervals.size());
  BOOST_TEST(t.device_ops.size() < 5000u);
  BOOST_TEST(has_warning(t, warning_code::dropped_device_records));
}

BOOST_AUTO_TEST_CASE(synchronization_records_become_ranges_under_the_waiting_call) {
  require_device();
  device_options options;
  options.synchronization_records = true;
  auto session = make_device_session(options);
  session->start();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_stream_sync(), 0);
  trace t;
  session->stop(t);
  print_warnings(t);
  const cpu_interval* wait = nullptr;
  const cpu_interval* call = nullptr;
  for (const cpu_interval& interval : t.intervals) {
    if (name_of(t, interval.name) == "Stream Sync") wait = &interval;
    if (name_of(t, interval.name) == "cudaStreamSynchronize") call = &interval;
  }
  BOOST_REQUIRE(wait != nullptr);
  BOOST_REQUIRE(call != nullptr);
  BOOST_TEST(name_of(t, t.domains[wait->domain]) == "cuda_sync");
  BOOST_TEST(wait->thread == call->thread);
  std::printf("  cudaStreamSynchronize [%lld, %lld], Stream Sync [%lld, %lld]\n",
              static_cast<long long>(call->start_ns), static_cast<long long>(call->end_ns),
              static_cast<long long>(wait->start_ns), static_cast<long long>(wait->end_ns));
  BOOST_TEST(wait->start_ns >= call->start_ns);
  BOOST_TEST(wait->end_ns <= call->end_ns);
}

// Rule 21: cudaMalloc and cudaFree of regionprof_gpu_stream_sync's 1 MiB buffer become an allocation and
// a free on cuda:N (MEMORY2), each on its call's thread at a time within its call.
BOOST_AUTO_TEST_CASE(allocations_and_frees_are_memory_events_within_their_calls) {
  require_device();
  auto session = make_device_session();
  session->start();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_stream_sync(), 0);
  trace t;
  session->stop(t);
  print_warnings(t);
  const auto call = [&t](const char* name) -> const cpu_interval* {
    for (const cpu_interval& interval : t.intervals) {
      if (name_of(t, interval.name) == name) return &interval;
    }
    return nullptr;
  };
  const cpu_interval* allocate = call("cudaMalloc");
  const cpu_interval* release = call("cudaFree");
  BOOST_REQUIRE(allocate != nullptr);
  BOOST_REQUIRE(release != nullptr);
  constexpr std::int64_t bytes = std::int64_t{1} << 20;
  int allocations = 0;
  int frees = 0;
  for (const memory_event& e : t.memory_events) {
    std::printf("  memory event: kind %d, %lld bytes on %s at %lld\n", static_cast<int>(e.kind),
                static_cast<long long>(e.bytes), memory_device_key(e.device).c_str(),
                static_cast<long long>(e.time_ns));
    const cpu_interval* within = e.kind == memory_event_kind::allocation ? allocate : release;
    if (std::abs(e.bytes) != bytes || e.device < 0) continue;
    (e.kind == memory_event_kind::allocation ? allocations : frees) += 1;
    BOOST_TEST(e.thread == within->thread);
    BOOST_TEST(e.time_ns >= within->start_ns);
    BOOST_TEST(e.time_ns <= within->end_ns);
  }
  BOOST_TEST(allocations == 1);
  BOOST_TEST(frees == 1);
}

BOOST_AUTO_TEST_CASE(another_cupti_subscriber_is_a_conflict_not_a_crash) {
  require_device();
  const collect::cupti_library& cupti = collect::process_cupti();
  CUpti_SubscriberHandle other = nullptr;
  const auto ignore = [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {};
  const CUpti_CallbackFunc callback = ignore;
  BOOST_REQUIRE(REGIONPROF_CUPTI(cupti, cuptiSubscribe, &other, callback, nullptr).ok());
  auto session = make_device_session();
  session->start();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_launch_loop(10), 0);
  trace t;
  session->stop(t);
  (void)REGIONPROF_CUPTI(cupti, cuptiUnsubscribe, other);
  print_warnings(t);
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST(t.device_ops.empty());
  BOOST_REQUIRE(has_warning(t, warning_code::cupti_subscriber_conflict));
  BOOST_TEST(t.warnings.at(0).message.find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") != std::string::npos);
  // Released, it works again.
  auto again = make_device_session();
  again->start();
  BOOST_REQUIRE_EQUAL(regionprof_gpu_launch_loop(10), 0);
  trace u;
  again->stop(u);
  BOOST_TEST(u.device_ops.size() == 10u);
}

BOOST_AUTO_TEST_CASE(the_harness_gets_device_time_per_region) {
  require_device();
  static const registered_region compute{region_kind::aot_module, "compute"};
  profile_options options;
  options.warmup_runs = 1;
  options.measured_runs = 3;
  const Profile profile = regionprof::profile(
      [] {
        const scoped_region region{compute};
        BOOST_REQUIRE_EQUAL(regionprof_gpu_launch_loop(100), 0);
      },
      options);
  const analysis_result& result = profile.result();
  for (const warning& w : result.warnings) std::printf("  warning %s: %s\n", std::string(to_string(w.code)).c_str(), w.message.c_str());
  BOOST_TEST(result.has_device_data);
  BOOST_REQUIRE_EQUAL(result.runs.size(), 3u);
  for (const run_result& run : result.runs) {
    BOOST_REQUIRE_EQUAL(run.regions.size(), 1u);
    const region_aggregate& region = run.regions[0];
    BOOST_TEST(result.regions.at(region.region).id == "aot_module:compute");
    BOOST_REQUIRE(region.device_time_ns.has_value());
    std::printf("  run %zu: compute cpu %lld ns, device %lld ns; residual device %lld ns\n", run.run_index,
                static_cast<long long>(region.cpu_time_ns), static_cast<long long>(*region.device_time_ns),
                static_cast<long long>(run.residual_device_ns.value_or(-1)));
    BOOST_TEST(*region.device_time_ns > 0);
    BOOST_TEST(*region.device_time_ns == *run.device_time_ns);  // all 100 kernels were launched inside it
    BOOST_TEST(run.residual_device_ns.value_or(-1) == 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
