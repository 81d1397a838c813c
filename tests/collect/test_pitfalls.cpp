// The pitfalls other CUPTI clients hit (docs/gpu.md, "Pitfalls"), each on real CUPTI record structs
// through the session's production path: many sessions in one process, pool exhaustion per CUPTI
// version, zero, inverted and out-of-session timestamps, detaching after profiling, and sharing CUPTI
// with another subscriber where the driver allows it.
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "fake_backend.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/collector.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

std::uint64_t now_ns() { return static_cast<std::uint64_t>(monotonic_now_ns()); }

std::uint64_t realtime_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
}

/// A fake whose CUPTI clock is ours and readable, so the session's window applies as on a GPU.
std::unique_ptr<fake_backend> paired_clock_backend(std::vector<record_buffer> buffers = {},
                                                   const collect::cupti_library& library = loaded_cupti()) {
  auto backend = std::make_unique<fake_backend>(std::move(buffers), library);
  backend->clock = [] { return std::optional<std::uint64_t>(now_ns()); };
  return backend;
}

std::vector<const warning*> warnings_with(const trace& t, warning_code code) {
  std::vector<const warning*> found;
  for (const warning& w : t.warnings) {
    if (w.code == code) found.push_back(&w);
  }
  return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Stand-ins for cuptiSubscribe_v2 as drivers answer it (the session's subscription code calls them
// through the same function table and checking macro as the real one).
int subscribe_calls = 0;
std::size_t last_struct_size = 0;
CUptiResult CUPTIAPI subscribe_shared(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* params) {
  ++subscribe_calls;
  last_struct_size = params->structSize;
  const auto* extended = reinterpret_cast<const collect::subscriber_params_13_2*>(params);
  if (params->structSize < collect::subscriber_params_13_2_size || extended->allowMultipleSubscribers != 1) {
    std::strncpy(params->oldSubscriberName, "CUPTI for Kineto", params->oldSubscriberSize - 1);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  std::strncpy(params->oldSubscriberName, "CUPTI for Kineto", params->oldSubscriberSize - 1);
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(std::uintptr_t{0x10});
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI subscribe_refused(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* params) {
  ++subscribe_calls;
  last_struct_size = params->structSize;
  std::strncpy(params->oldSubscriberName, "Nsight Systems", params->oldSubscriberSize - 1);
  return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}
CUptiResult CUPTIAPI subscribe_13_0(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc, void*, CUpti_SubscriberParams* params) {
  ++subscribe_calls;
  last_struct_size = params->structSize;
  if (params->structSize != CUpti_SubscriberParams_STRUCT_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(std::uintptr_t{0x20});
  return CUPTI_SUCCESS;
}

collect::cupti_library with_subscribe(decltype(collect::cupti_functions::cuptiSubscribe_v2) subscribe) {
  collect::cupti_library library = loaded_cupti();
  library.fn.cuptiSubscribe_v2 = subscribe;
  subscribe_calls = 0;
  last_struct_size = 0;
  return library;
}

void CUPTIAPI no_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_pitfalls)

BOOST_AUTO_TEST_CASE(a_hundred_sessions_in_one_process_keep_device_times_exact) {
  // Each session's first kernel is stamped on CUPTI's default clock (CLOCK_REALTIME, ~1e18 ns), as when
  // a timestamp callback registered again per session has not taken yet (pytorch#192021): it must be
  // skipped and counted, never a 1e14 ns time, and nothing of one session shows up in the next.
  for (int session_index = 0; session_index < 100; ++session_index) {
    BOOST_TEST_CONTEXT("session " << session_index) {
      auto backend = paired_clock_backend();
      fake_backend* fake = backend.get();
      auto session = collect::make_device_session(small_pool(), std::move(backend));
      session->start();
      const std::uint64_t base = now_ns();
      // One reading for both ends: the order arguments are evaluated in is unspecified (GCC goes right to
      // left), and two readings more than 500 ns apart made the stale kernel inverted instead.
      const std::uint64_t stale = realtime_ns();
      const auto id = static_cast<std::uint32_t>(1000 * session_index);
      record_buffer buffer;
      buffer.add(kernel(id + 1, stale, stale + 500, "stale"))
          .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, id + 2, base,
                        base + 100, 7, 8))
          .add(kernel(id + 2, base + 200, base + 200 + 1'000 + session_index, "k"))
          .add(kernel(id + 2, base + 1'300, base + 1'300 + 7, "k"));
      fake->add(buffer);
      trace t;
      session->stop(t);
      BOOST_REQUIRE_EQUAL(t.device_ops.size(), 2u);
      std::int64_t device = 0;
      for (const device_op& op : t.device_ops) {
        BOOST_TEST(op.correlation_id == id + 2);
        device += op.end_ns - op.start_ns;
      }
      BOOST_TEST(device == 1'000 + session_index + 7);
      const auto anomaly = warnings_with(t, warning_code::clock_anomaly);
      BOOST_REQUIRE_EQUAL(anomaly.size(), 1u);
      BOOST_TEST(anomaly[0]->message.rfind("1 activity records were timed outside the session", 0) == 0);
      BOOST_TEST(fake->enables == 1);
      BOOST_TEST(fake->releases == 1);
      BOOST_TEST(fake->detaches == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_exhausted_pool_refuses_cupti_from_v27_on_and_spills_for_older_ones) {
  // Four pool buffers; CUPTI fills six. The fake completes each buffer at once, so the fifth and sixth
  // requests find the pool exhausted.
  const auto six_buffers = [] {
    std::vector<record_buffer> buffers(6);
    for (std::uint32_t i = 0; i < 6; ++i) {
      for (std::uint32_t k = 0; k < 3; ++k) buffers[i].add(kernel(1 + i, 10 + k, 20 + k, "k"));
    }
    return buffers;
  };
  // One session over the six buffers: 12 records kept (4 buffers of 3), and the one DROPPED_DEVICE_RECORDS
  // message.
  const auto dropped_message = [](std::unique_ptr<fake_backend> backend) {
    auto session = collect::make_device_session(small_pool(), std::move(backend));
    session->start();
    trace t;
    session->stop(t);
    BOOST_TEST(t.device_ops.size() == 12u);
    const auto dropped = warnings_with(t, warning_code::dropped_device_records);
    BOOST_REQUIRE_EQUAL(dropped.size(), 1u);
    return dropped[0]->message;
  };
  // CUPTI 13 (API version 130001): a refused request is safe; CUPTI counts what it dropped.
  BOOST_TEST(dropped_message(std::make_unique<fake_backend>(six_buffers()))
                 .rfind("CUPTI dropped 6 device activity records for lack of buffer space", 0) == 0);
  // Activity API v26 (CUDA 12.8) would crash on a refusal: it gets the spill buffer, whose records are
  // counted and discarded, and no request is ever refused.
  {
    collect::cupti_library old = loaded_cupti();
    old.api_version = 26;
    BOOST_TEST(collect::spill_needed(26));
    BOOST_TEST(!collect::spill_needed(27));
    BOOST_TEST(collect::spill_needed(0));  // unknown: as the oldest
    BOOST_TEST(!collect::spill_needed(130001));
    BOOST_TEST(dropped_message(std::make_unique<fake_backend>(six_buffers(), old)) ==
               "the activity buffer pool was exhausted and this CUPTI (activity API before v27) must not be refused a "
               "buffer: 6 records written to 2 spill buffers were discarded; raise max_buffer_bytes (regionprof run: "
               "REGIONPROF_DEVICE_BUFFER_MB)");
  }
}

BOOST_AUTO_TEST_CASE(zero_inverted_and_out_of_session_timestamps_are_clock_anomalies) {
  auto backend = paired_clock_backend();
  fake_backend* fake = backend.get();
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();
  const std::uint64_t base = now_ns();
  record_buffer buffer;
  buffer.add(kernel(1, 0, base + 50, "zero start"))
      .add(kernel(1, base + 60, 0, "zero end"))
      .add(memcpy_op(1, base + 90, base + 80, 8))                    // inverted
      .add(kernel(1, base - 2'000'000'000, base - 1'999'000'000, "before the session"))
      .add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, base, base + 10, 7, 8))
      .add(kernel(1, base + 100, base + 300, "kept"))
      .add(kernel(1, base + 3'600'000'000'000, base + 3'600'000'001'000, "an hour after it"));
  fake->add(buffer);
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  BOOST_TEST(t.device_ops[0].end_ns - t.device_ops[0].start_ns == 200);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 1u);
  const auto anomaly = warnings_with(t, warning_code::clock_anomaly);
  BOOST_REQUIRE_EQUAL(anomaly.size(), 1u);
  BOOST_TEST(anomaly[0]->source == warning_source::cupti);
  BOOST_TEST(anomaly[0]->message.rfind("3 device activity records had a zero or inverted timestamp", 0) == 0);
  BOOST_TEST(contains(anomaly[0]->message, "; 2 activity records were timed outside the session"));
  BOOST_TEST(contains(anomaly[0]->message, "they were skipped, so no device time is negative or huge"));
  BOOST_TEST(warnings_with(t, warning_code::dropped_device_records).empty());
}

BOOST_AUTO_TEST_CASE(cupti_is_detached_after_profiling_unless_asked_not_to) {
  {
    auto backend = std::make_unique<fake_backend>();
    fake_backend* fake = backend.get();
    auto session = collect::make_device_session(small_pool(), std::move(backend));
    session->start();
    trace t;
    session->stop(t);
    BOOST_TEST(fake->releases == 1);
    BOOST_TEST(fake->detaches == 1);  // after release: nothing of regionprof's is left in CUPTI
  }
  {
    device_options options = small_pool();
    options.detach_after_stop = false;
    auto backend = std::make_unique<fake_backend>();
    fake_backend* fake = backend.get();
    auto session = collect::make_device_session(options, std::move(backend));
    session->start();
    trace t;
    session->stop(t);
    BOOST_TEST(fake->detaches == 0);
  }
}

BOOST_AUTO_TEST_CASE(coexistence_shares_cupti_where_the_driver_allows_several_subscribers) {
  const collect::cupti_library library = with_subscribe(&subscribe_shared);
  collect::cupti_subscription subscription;
  const collect::backend_status status = collect::subscribe_to_cupti(library, &no_callback, nullptr, subscription);
  BOOST_TEST(status.ok(), status.message);
  BOOST_TEST(subscribe_calls == 1);
  BOOST_TEST(last_struct_size == collect::subscriber_params_13_2_size);  // allowMultipleSubscribers sent
  BOOST_TEST(subscription.shared());
  BOOST_TEST(subscription.other == "CUPTI for Kineto");
  BOOST_TEST(subscription.handle != nullptr);
}

BOOST_AUTO_TEST_CASE(coexistence_keeps_the_conflict_where_the_driver_does_not_allow_it) {
  const collect::cupti_library library = with_subscribe(&subscribe_refused);
  collect::cupti_subscription subscription;
  const collect::backend_status status = collect::subscribe_to_cupti(library, &no_callback, nullptr, subscription);
  BOOST_TEST(status.failure == collect::backend_failure::subscriber_conflict);
  BOOST_TEST(status.message.rfind("CUPTI is already in use by Nsight Systems (cuptiSubscribe_v2(", 0) == 0,
             status.message);
  BOOST_TEST(subscription.handle == nullptr);
  BOOST_TEST(!subscription.shared());
}

BOOST_AUTO_TEST_CASE(coexistence_falls_back_for_a_cupti_that_does_not_know_the_field) {
  // CUPTI 13.0/13.1 refuse the larger structSize: the 13.0 fields alone, a sole subscriber.
  const collect::cupti_library library = with_subscribe(&subscribe_13_0);
  collect::cupti_subscription subscription;
  const collect::backend_status status = collect::subscribe_to_cupti(library, &no_callback, nullptr, subscription);
  BOOST_TEST(status.ok(), status.message);
  BOOST_TEST(subscribe_calls == 2);
  BOOST_TEST(last_struct_size == CUpti_SubscriberParams_STRUCT_SIZE);
  BOOST_TEST(!subscription.shared());
  BOOST_TEST(subscription.handle != nullptr);
}

BOOST_AUTO_TEST_SUITE_END()
