// Buffers of real CUPTI record structs through the production path: the pool's CUPTI callbacks, CUPTI's
// own walker (cuptiActivityGetNextRecord, which works without a driver) and the decoder, into a trace.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "fake_backend.hpp"
#include "regionprof/collect/activity_decoder.hpp"
#include "regionprof/collect/collector.hpp"
#include "regionprof/trace/trace.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

constexpr std::uint32_t pid = 4242;
constexpr std::uint32_t tid = 4243;

/// One session over `buffers`: start, one synchronize, stop.
trace run_session(std::vector<record_buffer> buffers, device_options options = small_pool()) {
  auto session = collect::make_device_session(options, std::make_unique<fake_backend>(std::move(buffers)));
  BOOST_REQUIRE(session->available());
  session->start();
  session->synchronize();
  trace out;
  session->stop(out);
  return out;
}

std::string name_of(const trace& t, name_id id) { return std::string(t.strings.view(id)); }

std::vector<const warning*> warnings_with(const trace& t, warning_code code) {
  std::vector<const warning*> found;
  for (const warning& w : t.warnings) {
    if (w.code == code) found.push_back(&w);
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_decode)

BOOST_AUTO_TEST_CASE(every_record_kind_is_decoded_into_the_trace) {
  void* overhead_details = std::malloc(16);  // CUPTI 13 hands these to the client to free
  record_buffer buffer;
  buffer.add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1000, 1500, pid, tid))
      .add(kernel(1, 2000, 2600, "_Z5scalePfi", 7, 0))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, 1600, 1700, pid, tid))
      .add(memcpy_op(2, 2700, 2900, 4096))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 3, 1800, 1850, pid, tid))
      .add(memset_op(3, 3000, 3100, 1024, 9))
      .add(api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 4, 1900, 1950, pid, tid))
      .add(kernel(4, 3200, 3300, "plain_c_kernel", 9, 1))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5, 1960, 3400,
                    pid, tid))
      .add(sync_op(5, 1970, 3390, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE))
      .add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 5000, 6000, overhead_details));
  device_options options = small_pool();
  options.synchronization_records = true;
  const trace t = run_session({buffer}, options);

  BOOST_TEST(t.device_tracing);
  BOOST_REQUIRE_EQUAL(t.threads.size(), 1u);
  BOOST_TEST(t.threads[0].pid == pid);
  BOOST_TEST(t.threads[0].tid == tid);

  // Device ops in record order, with CUPTI's times (the fake's clock is ours: identity mapping).
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 4u);
  const device_op& k1 = t.device_ops[0];
  BOOST_TEST(name_of(t, k1.name) == "scale(float*, int)");  // demangled, as Kineto shows kernels
  BOOST_TEST(k1.kind == device_op_kind::kernel);
  BOOST_TEST(k1.start_ns == 2000);
  BOOST_TEST(k1.end_ns == 2600);
  BOOST_TEST(k1.correlation_id == 1u);
  BOOST_TEST(k1.stream == 7u);
  BOOST_TEST(k1.device == 0u);
  BOOST_TEST(k1.bytes == 0u);
  const device_op& copy = t.device_ops[1];
  BOOST_TEST(name_of(t, copy.name) == "Memcpy HtoD (Pageable -> Device)");
  BOOST_TEST(copy.kind == device_op_kind::memcpy);
  BOOST_TEST(copy.bytes == 4096u);
  BOOST_TEST(copy.correlation_id == 2u);
  BOOST_TEST(copy.start_ns == 2700);
  BOOST_TEST(copy.end_ns == 2900);
  const device_op& set = t.device_ops[2];
  BOOST_TEST(name_of(t, set.name) == "Memset (Device)");
  BOOST_TEST(set.kind == device_op_kind::memset);
  BOOST_TEST(set.bytes == 1024u);
  BOOST_TEST(set.stream == 9u);
  BOOST_TEST(set.correlation_id == 3u);
  const device_op& k2 = t.device_ops[3];
  BOOST_TEST(name_of(t, k2.name) == "plain_c_kernel");  // not mangled: kept
  BOOST_TEST(k2.device == 1u);
  BOOST_TEST(k2.correlation_id == 4u);

  // API calls on their thread in time order, named by CUPTI without version tags; then the sync range.
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 6u);
  struct expected_call {
    const char* name;
    std::int64_t start, end;
    std::uint32_t correlation;
    interval_kind kind;
  };
  const expected_call calls[] = {
      {"cudaLaunchKernel", 1000, 1500, 1, interval_kind::runtime_api},
      {"cudaMemcpyAsync", 1600, 1700, 2, interval_kind::runtime_api},
      {"cudaMemsetAsync", 1800, 1850, 3, interval_kind::runtime_api},
      {"cuLaunchKernel", 1900, 1950, 4, interval_kind::driver_api},
      {"cudaStreamSynchronize", 1960, 3400, 5, interval_kind::runtime_api},
  };
  for (std::size_t i = 0; i < std::size(calls); ++i) {
    const cpu_interval& call = t.intervals[i];
    BOOST_TEST_CONTEXT("call " << i) {
      BOOST_TEST(name_of(t, call.name) == calls[i].name);
      BOOST_TEST(call.start_ns == calls[i].start);
      BOOST_TEST(call.end_ns == calls[i].end);
      BOOST_TEST(call.correlation_id == calls[i].correlation);
      BOOST_TEST(call.kind == calls[i].kind);
      BOOST_TEST(call.thread == 0u);
      BOOST_TEST(call.domain == 0u);
    }
  }
  const cpu_interval& wait = t.intervals[5];
  BOOST_TEST(name_of(t, wait.name) == "Stream Sync");
  BOOST_TEST(name_of(t, t.domains[wait.domain]) == "cuda_sync");
  BOOST_TEST(wait.kind == interval_kind::range);
  BOOST_TEST(wait.thread == 0u);
  BOOST_TEST(wait.start_ns == 1970);
  BOOST_TEST(wait.end_ns == 3390);
  BOOST_TEST(wait.correlation_id == 0u);

  // CUPTI's own overhead is reported; nothing was lost.
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::cupti_overhead);
  BOOST_TEST(t.warnings[0].source == warning_source::cupti);
  BOOST_TEST(t.warnings[0].message ==
             "CUPTI's own overhead: 1 records, 0.001 ms in total (CUPTI buffer flush: 1, 0.001 ms); the CPU times "
             "above include it");
}

BOOST_AUTO_TEST_CASE(kernels_of_a_graph_launch_share_its_correlation_id) {
  record_buffer buffer;
  buffer.add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 70, 100, 200, pid, tid))
      .add(kernel(70, 300, 400, "_Z10graph_nodev", 3))
      .add(kernel(70, 300, 450, "_Z10graph_nodev", 4))
      .add(kernel(70, 460, 500, "_Z10graph_tailv", 3));
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 1u);
  BOOST_TEST(name_of(t, t.intervals[0].name) == "cudaGraphLaunch");
  BOOST_TEST(t.intervals[0].correlation_id == 70u);
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 3u);
  for (const device_op& op : t.device_ops) BOOST_TEST(op.correlation_id == 70u);
  BOOST_TEST(t.device_ops[0].stream == 3u);
  BOOST_TEST(t.device_ops[1].stream == 4u);
  BOOST_TEST(t.device_ops[0].name == t.device_ops[1].name);  // one name, interned once
  BOOST_TEST(name_of(t, t.device_ops[2].name) == "graph_tail()");
}

BOOST_AUTO_TEST_CASE(a_kind_regionprof_does_not_decode_is_counted_and_skipped) {
  CUpti_ActivityContext3 context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 1;
  record_buffer buffer;
  buffer.add(kernel(1, 10, 20, "first")).add(context).add(kernel(2, 30, 40, "second"));
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 2u);  // the walk went on past the skipped record
  BOOST_TEST(name_of(t, t.device_ops[1].name) == "second");
  const auto dropped = warnings_with(t, warning_code::dropped_device_records);
  BOOST_REQUIRE_EQUAL(dropped.size(), 1u);
  BOOST_TEST(dropped[0]->message ==
             "1 activity records of kinds regionprof does not decode were skipped (CONTEXT: 1)");
}

BOOST_AUTO_TEST_CASE(a_record_cupti_calls_invalid_ends_the_walk_and_is_counted) {
  collect::memset_record corrupt = memset_op(2, 30, 40, 8);
  corrupt.kind = static_cast<CUpti_ActivityKind>(999);  // no such kind
  record_buffer buffer;
  buffer.add(kernel(1, 10, 20, "first")).add(corrupt).add(kernel(3, 50, 60, "third"));
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  const auto dropped = warnings_with(t, warning_code::dropped_device_records);
  BOOST_REQUIRE_EQUAL(dropped.size(), 1u);
  const std::size_t unread = sizeof(collect::memset_record) + sizeof(collect::kernel_record);
  BOOST_TEST(dropped[0]->message == "1 activity buffers ended in a truncated or invalid record; " +
                                        std::to_string(unread) + " bytes were not decoded");
}

BOOST_AUTO_TEST_CASE(a_buffer_ending_mid_record_is_counted_and_not_read_past_its_end) {
  record_buffer buffer;
  buffer.add(kernel(1, 10, 20, "whole"))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1, 5, pid, tid));
  const std::size_t valid = buffer.bytes().size() - 8;  // the API record is cut 8 bytes short
  buffer.valid_bytes(valid);
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  BOOST_TEST(t.intervals.empty());
  const auto dropped = warnings_with(t, warning_code::dropped_device_records);
  BOOST_REQUIRE_EQUAL(dropped.size(), 1u);
  BOOST_TEST(dropped[0]->message == "1 activity buffers ended in a truncated or invalid record; " +
                                        std::to_string(sizeof(collect::api_record) - 8) + " bytes were not decoded");

  // The walker on an allocation of exactly `valid` bytes: under ASan a read past the end would fail here.
  fake_backend backend;
  auto exact = std::make_unique<std::uint8_t[]>(valid);
  std::memcpy(exact.get(), buffer.bytes().data(), valid);
  std::uint64_t visited = 0;
  const collect::walk_summary walk =
      backend.for_each_record(exact.get(), valid, [&visited](const collect::activity_record&) { ++visited; });
  BOOST_TEST(visited == 1u);
  BOOST_TEST(walk.records == 1u);
  BOOST_TEST(walk.record_bytes == sizeof(collect::kernel_record));
  BOOST_TEST(walk.unread_bytes == sizeof(collect::api_record) - 8);
  BOOST_TEST(!walk.invalid_record);
  BOOST_TEST(walk.error.empty());
}

BOOST_AUTO_TEST_CASE(records_with_zero_or_inverted_timestamps_are_clock_anomalies_and_skipped) {
  record_buffer buffer;
  buffer.add(kernel(1, 0, 0, "untimed")).add(kernel(2, 10, 20, "timed")).add(memcpy_op(3, 50, 40, 8));
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  BOOST_TEST(name_of(t, t.device_ops[0].name) == "timed");
  BOOST_TEST(warnings_with(t, warning_code::dropped_device_records).empty());
  const auto anomaly = warnings_with(t, warning_code::clock_anomaly);
  BOOST_REQUIRE_EQUAL(anomaly.size(), 1u);
  BOOST_TEST(anomaly[0]->message.rfind("2 device activity records had a zero or inverted timestamp", 0) == 0);
}

BOOST_AUTO_TEST_CASE(a_driver_call_made_by_the_runtime_gives_its_launch_to_the_runtime_call) {
  record_buffer buffer;
  buffer.add(api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 9, 150, 300, pid, tid))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 9, 100, 400, pid, tid))
      .add(kernel(9, 500, 600, "k"));
  const trace t = run_session({buffer});
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 2u);
  // The enclosing runtime call comes first and keeps the id; the nested driver call stays as time.
  BOOST_TEST(name_of(t, t.intervals[0].name) == "cudaLaunchKernel");
  BOOST_TEST(t.intervals[0].correlation_id == 9u);
  BOOST_TEST(name_of(t, t.intervals[1].name) == "cuLaunchKernel");
  BOOST_TEST(t.intervals[1].correlation_id == 0u);
  BOOST_TEST(t.intervals[1].kind == interval_kind::driver_api);
  BOOST_TEST(t.device_ops.at(0).correlation_id == 9u);
}

BOOST_AUTO_TEST_CASE(api_calls_of_several_threads_land_on_their_threads) {
  record_buffer buffer;
  buffer.add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 10, 20, pid, 11))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2, 15, 25, pid, 12))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 3, 30, 40, pid, 11));
  trace t;
  const thread_index existing = t.add_thread(pid, 12, "worker");  // e.g. from the NVTX capture
  auto session = collect::make_device_session(small_pool(), std::make_unique<fake_backend>(std::vector{buffer}));
  session->start();
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.threads.size(), 2u);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 3u);
  for (const cpu_interval& call : t.intervals) {
    const thread_info& thread = t.threads[call.thread];
    BOOST_TEST(thread.pid == pid);
    BOOST_TEST(thread.tid == (call.correlation_id == 2 ? 12 : 11));
    if (call.correlation_id == 2) BOOST_TEST(call.thread == existing);
  }
}

BOOST_AUTO_TEST_CASE(dropped_records_are_reported_with_a_buffer_size_that_suffices) {
  std::vector<record_buffer> buffers(3);
  std::uint32_t correlation = 0;
  for (record_buffer& buffer : buffers) {
    for (int i = 0; i < 10; ++i, ++correlation) buffer.add(kernel(correlation, 100 + correlation, 200 + correlation, "k"));
  }
  device_options options;
  options.buffer_bytes = 4096;  // 10 kernel records (2160 bytes) fit one buffer
  options.max_buffer_bytes = 8192;
  const trace t = run_session(buffers, options);
  BOOST_TEST(t.device_ops.size() == 20u);  // the third buffer found the pool exhausted
  const auto dropped = warnings_with(t, warning_code::dropped_device_records);
  BOOST_REQUIRE_EQUAL(dropped.size(), 1u);
  // 20 records seen + 10 dropped, 216 bytes each, 25 % headroom: 8100 bytes -> 2 buffers, but at least one
  // more than the 2 there were: 3 x 4 KiB.
  BOOST_TEST(dropped[0]->message ==
             "CUPTI dropped 10 device activity records for lack of buffer space: the pool of 2 buffers of 4 KiB "
             "(8 KiB, device_options::max_buffer_bytes) was exhausted (1 requests refused); 12 KiB would have "
             "sufficed: raise max_buffer_bytes (regionprof run: REGIONPROF_DEVICE_BUFFER_MB)");
}

BOOST_AUTO_TEST_CASE(kernel_names_are_copied_when_cupti_completes_the_buffer) {
  // The name a record points at may be gone by the time the session stops (the runtime unloads its
  // modules at exit): what the decoder shows is the name at completion time.
  std::string name = "_Z8unloadedv";
  auto session = collect::make_device_session(small_pool(), std::make_unique<fake_backend>());
  session->start();
  record_buffer buffer;
  buffer.add(kernel(1, 10, 20, name.c_str()));
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t max_records = 0;
  collect::cupti_buffer_requested(&data, &size, &max_records);
  BOOST_REQUIRE(data != nullptr);
  std::memcpy(data, buffer.bytes().data(), buffer.bytes().size());
  collect::cupti_buffer_completed(nullptr, 0, data, size, buffer.valid());
  name.replace(0, name.size(), "_Z8reloadedv");  // the module's memory, reused
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  BOOST_TEST(name_of(t, t.device_ops[0].name) == "unloaded()");
}

BOOST_AUTO_TEST_CASE(api_names_come_from_cupti_without_its_version_tags) {
  fake_backend backend;
  BOOST_TEST(backend.api_name(interval_kind::runtime_api, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) ==
             "cudaLaunchKernel");
  BOOST_TEST(backend.api_name(interval_kind::runtime_api, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) ==
             "cudaGraphLaunch");
  BOOST_TEST(backend.api_name(interval_kind::driver_api, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == "cuLaunchKernel");
  BOOST_TEST(backend.api_name(interval_kind::driver_api, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) == "cuMemAlloc_v2");
  BOOST_TEST(backend.api_name(interval_kind::runtime_api, 999999) == "cuda_runtime_cbid_999999");
}

BOOST_AUTO_TEST_CASE(names_follow_kinetos_conventions) {
  BOOST_TEST(collect::memcpy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                                  CUPTI_ACTIVITY_MEMORY_KIND_PINNED) == "Memcpy DtoH (Device -> Pinned)");
  BOOST_TEST(collect::memset_name(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) == "Memset (Managed)");
  BOOST_TEST(collect::synchronization_name(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE) == "Context Sync");
  BOOST_TEST(collect::synchronization_name(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) ==
             "Stream Wait Event");
  BOOST_TEST(collect::overhead_name(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER) == "driver compiler");
  BOOST_TEST(collect::activity_kind_name(12345) == "kind 12345");
}

BOOST_AUTO_TEST_SUITE_END()
