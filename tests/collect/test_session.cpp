// The device session's life cycle and reports, the buffer pool, the clock fit, the loader and the
// checking macro. The no-driver cases run the real CUPTI here (a machine without a driver).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "fake_backend.hpp"
#include "regionprof/collect/buffer_pool.hpp"
#include "regionprof/collect/clock_fit.hpp"
#include "regionprof/collect/collector.hpp"
#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/collect/device_session.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

/// The no-driver tests describe this machine and CI; where a driver exists they are skipped, visibly.
void skip_when_a_driver_is_present() {
  if (collect::process_driver().loaded()) {
    std::printf("skipped: this machine has a CUDA driver; the no-driver path is tested where there is none\n");
    std::fflush(stdout);
    std::exit(77);
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_session)

BOOST_AUTO_TEST_CASE(without_a_driver_the_session_says_so_once_and_records_nothing) {
  skip_when_a_driver_is_present();
  auto session = make_device_session();
  BOOST_TEST(!session->available());
  BOOST_TEST(contains(session->unavailable_reason(), "no CUDA driver (libcuda.so.1: "));
  session->start();
  session->synchronize();
  trace t;
  t.add_thread(1, 1);
  session->stop(t);
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::device_tracing_unavailable);
  BOOST_TEST(t.warnings[0].source == warning_source::cupti);
  BOOST_TEST(t.warnings[0].message.rfind("device tracing unavailable: no CUDA driver (libcuda.so.1: ", 0) == 0);
  BOOST_TEST(contains(t.warnings[0].message, "; the profile is CPU-only"));
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST(t.device_ops.empty());
  BOOST_TEST(t.intervals.empty());
  BOOST_TEST(t.threads.size() == 1u);
  BOOST_TEST(!collect::buffer_pool::instance().attached());
}

BOOST_AUTO_TEST_CASE(cupti_without_a_driver_answers_unknown_which_is_reported_as_no_driver) {
  skip_when_a_driver_is_present();
  // The real CUPTI, the driver checks skipped: CUPTI itself must refuse, and say why.
  auto session = collect::make_device_session(small_pool(), collect::make_cupti_backend(collect::driver_probe::cupti_only));
  BOOST_TEST(session->available());  // CUPTI loads without a driver
  session->start();
  BOOST_TEST(!session->available());
  const std::string reason = session->unavailable_reason();
  BOOST_TEST_MESSAGE("reason: " << reason);
  BOOST_TEST(reason.rfind("no CUDA driver (cuptiSubscribe", 0) == 0);
  BOOST_TEST(contains(reason, "-> CUPTI_ERROR_UNKNOWN (999) at cupti_backend.cpp:"));
  BOOST_TEST(!collect::buffer_pool::instance().attached());
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::device_tracing_unavailable);
  BOOST_TEST(t.warnings[0].message == "device tracing unavailable: " + reason + "; the profile is CPU-only");
}

BOOST_AUTO_TEST_CASE(cupti_failures_map_to_why_device_tracing_is_off) {
  collect::cupti_status conflict{CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiSubscribe_v2(...) -> X"};
  collect::backend_status named = collect::describe_cupti_failure(conflict, "CUPTI for Nsight Systems");
  BOOST_TEST(named.failure == collect::backend_failure::subscriber_conflict);
  BOOST_TEST(named.message ==
             "CUPTI is already in use by CUPTI for Nsight Systems (cuptiSubscribe_v2(...) -> X); profile without the "
             "other tool, or where the driver lets CUPTI serve several subscribers (CUDA 13.3), to get device time");
  const collect::backend_status unnamed = collect::describe_cupti_failure(conflict, "");
  BOOST_TEST(contains(unnamed.message, "another tool (Nsight Systems, Nsight Compute, torch.profiler/Kineto"));
  const collect::backend_status driverless =
      collect::describe_cupti_failure({CUPTI_ERROR_UNKNOWN, "cuptiActivityEnable(kind) -> Y"}, "");
  BOOST_TEST(driverless.failure == collect::backend_failure::no_driver);
  BOOST_TEST(driverless.message == "no CUDA driver (cuptiActivityEnable(kind) -> Y)");
  const collect::backend_status other =
      collect::describe_cupti_failure({CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiActivityEnable(kind) -> Z"}, "");
  BOOST_TEST(other.failure == collect::backend_failure::cupti_error);
  BOOST_TEST(other.message == "cuptiActivityEnable(kind) -> Z");
}

BOOST_AUTO_TEST_CASE(another_subscriber_is_reported_as_a_conflict_and_the_cpu_profile_goes_on) {
  auto backend = std::make_unique<fake_backend>();
  fake_backend* spy = backend.get();
  spy->enable_result = {collect::backend_failure::subscriber_conflict, "CUPTI is already in use by nsys (...)"};
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  BOOST_TEST(session->available());
  session->start();
  BOOST_TEST(!session->available());
  BOOST_TEST(!collect::buffer_pool::instance().attached());
  session->synchronize();
  BOOST_TEST(spy->synchronizations == 0);
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::cupti_subscriber_conflict);
  BOOST_TEST(t.warnings[0].message ==
             "device tracing off: CUPTI is already in use by nsys (...); the profile is CPU-only");
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST(spy->flushes == 0);
}

BOOST_AUTO_TEST_CASE(a_second_session_in_the_process_is_a_conflict_until_the_first_stops) {
  auto first = collect::make_device_session(small_pool(), std::make_unique<fake_backend>());
  auto second = collect::make_device_session(small_pool(), std::make_unique<fake_backend>());
  first->start();
  second->start();
  BOOST_TEST(!second->available());
  BOOST_TEST(second->unavailable_reason() ==
             "another regionprof device session is already collecting in this process (CUPTI serves one)");
  trace t;
  second->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::cupti_subscriber_conflict);
  first->stop(t);
  BOOST_TEST(t.device_tracing);
  auto third = collect::make_device_session(small_pool(), std::make_unique<fake_backend>());
  third->start();
  BOOST_TEST(third->available());
  third->stop(t);
}

BOOST_AUTO_TEST_CASE(no_device_reported_by_the_probe_means_nothing_is_enabled) {
  auto backend = std::make_unique<fake_backend>();
  fake_backend* spy = backend.get();
  spy->probe_result = {collect::backend_failure::no_device, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE (100))"};
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  BOOST_TEST(!session->available());
  session->start();
  BOOST_TEST(spy->enables == 0);
  BOOST_TEST(!collect::buffer_pool::instance().attached());
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::device_tracing_unavailable);
  BOOST_TEST(t.warnings[0].message ==
             "device tracing unavailable: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE (100)); the profile is CPU-only");
}

BOOST_AUTO_TEST_CASE(the_session_drives_the_backend_in_order) {
  auto backend = std::make_unique<fake_backend>();
  fake_backend* spy = backend.get();
  {
    auto session = collect::make_device_session(small_pool(), std::move(backend));
    session->start();
    BOOST_TEST(spy->enables == 1);
    BOOST_TEST(!spy->synchronization_records);
    BOOST_TEST(collect::buffer_pool::instance().attached());  // allocated before the first measured run
    session->start();                                         // idempotent
    BOOST_TEST(spy->enables == 1);
    session->synchronize();
    BOOST_TEST(spy->synchronizations == 1);
    trace t;
    session->stop(t);
    BOOST_TEST(spy->synchronizations == 2);  // stop waits for launched work first
    BOOST_TEST(spy->disables == 1);
    BOOST_TEST(spy->flushes == 1);
    BOOST_TEST(spy->releases == 1);
    BOOST_TEST(t.device_tracing);
    BOOST_TEST(t.warnings.empty());
    BOOST_TEST(!collect::buffer_pool::instance().attached());
    session->stop(t);  // a second stop adds nothing
    BOOST_TEST(spy->flushes == 1);
  }
  // A session dropped while collecting releases CUPTI and the pool.
  auto dropped_backend = std::make_unique<fake_backend>();
  fake_backend* dropped_spy = dropped_backend.get();
  int flushes = 0;
  {
    auto session = collect::make_device_session(small_pool(), std::move(dropped_backend));
    session->start();
    BOOST_TEST(collect::buffer_pool::instance().attached());
    flushes = dropped_spy->flushes;
    BOOST_TEST(flushes == 0);
  }
  BOOST_TEST(!collect::buffer_pool::instance().attached());
}

BOOST_AUTO_TEST_CASE(bad_buffer_options_throw_with_how_to_fix_them) {
  device_options none = small_pool();
  none.buffer_bytes = 0;
  auto empty = collect::make_device_session(none, std::make_unique<fake_backend>());
  BOOST_CHECK_EXCEPTION(empty->start(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(), "device_options::buffer_bytes is 0");
  });
  device_options small = small_pool();
  small.max_buffer_bytes = small.buffer_bytes - 8;
  auto capped = collect::make_device_session(small, std::make_unique<fake_backend>());
  BOOST_CHECK_EXCEPTION(capped->start(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(), "device_options::max_buffer_bytes (65528) holds no buffer of buffer_bytes (65536)");
  });
  BOOST_TEST(!collect::buffer_pool::instance().attached());
}

BOOST_AUTO_TEST_CASE(the_pool_hands_out_preallocated_buffers_and_refuses_past_its_cap) {
  collect::buffer_pool& pool = collect::buffer_pool::instance();
  BOOST_REQUIRE(pool.attach(4096, 2));
  BOOST_TEST(!pool.attach(4096, 2));  // one session at a time
  std::uint8_t* first = nullptr;
  std::uint8_t* second = nullptr;
  std::uint8_t* third = nullptr;
  std::size_t size = 0;
  std::size_t max_records = 99;
  collect::cupti_buffer_requested(&first, &size, &max_records);
  BOOST_TEST(size == 4096u);
  BOOST_TEST(max_records == 0u);  // as many as fit
  collect::cupti_buffer_requested(&second, &size, &max_records);
  BOOST_REQUIRE(first != nullptr);
  BOOST_REQUIRE(second != nullptr);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(first) % 8 == 0u);
  BOOST_TEST(second - first == 4096);
  collect::cupti_buffer_requested(&third, &size, &max_records);
  BOOST_TEST(third == nullptr);  // the cap: CUPTI will drop and count
  BOOST_TEST(size == 0u);
  collect::cupti_buffer_completed(nullptr, 0, first, 4096, 0);  // empty: reused
  collect::cupti_buffer_requested(&third, &size, &max_records);
  BOOST_TEST(third == first);
  collect::cupti_buffer_completed(nullptr, 0, second, 4096, 100);
  std::uint8_t foreign[16];
  collect::cupti_buffer_completed(nullptr, 0, foreign, 16, 16);
  const collect::pool_harvest harvest = pool.detach();
  BOOST_REQUIRE_EQUAL(harvest.completed.size(), 1u);
  BOOST_TEST(harvest.completed[0].data == second);
  BOOST_TEST(harvest.completed[0].valid_bytes == 100u);
  BOOST_TEST(harvest.refused_requests == 1u);
  BOOST_TEST(harvest.foreign_completions == 1u);
  BOOST_TEST(harvest.outstanding == 1u);  // `first` is still lent: its block stays mapped
  BOOST_TEST(harvest.block == nullptr);
  BOOST_TEST(!pool.attached());
  std::uint8_t* late = nullptr;
  collect::cupti_buffer_requested(&late, &size, &max_records);
  BOOST_TEST(late == nullptr);  // detached: nothing more is handed out
}

BOOST_AUTO_TEST_CASE(the_clock_fit_maps_cupti_time_onto_ours) {
  const collect::clock_sample first{1'000, 5'000, 10};
  const collect::clock_map same_rate = collect::clock_map::fit(first, {3'000, 7'000, 10});
  BOOST_TEST(!same_rate.is_identity());
  BOOST_TEST(same_rate.to_monotonic(6'000) == 2'000);
  BOOST_TEST(same_rate.to_monotonic(4'000) == 0);  // before the first sample too
  const collect::clock_map half_rate = collect::clock_map::fit(first, {5'000, 7'000, 10});
  BOOST_TEST(half_rate.slope() == 2.0);
  BOOST_TEST(half_rate.to_monotonic(6'000) == 3'000);
  const collect::clock_map shifted = collect::clock_map::offset(first);
  BOOST_TEST(shifted.to_monotonic(5'500) == 1'500);
  BOOST_TEST(collect::clock_map::fit(first, first).to_monotonic(5'500) == 1'500);  // degenerate: offset only
  const collect::clock_map identity;
  BOOST_TEST(identity.is_identity());
  BOOST_TEST(identity.to_monotonic(123) == 123);
  // CUPTI's default clock is CLOCK_REALTIME: ~1.8e18 ns, far from CLOCK_MONOTONIC, mapped exactly.
  const std::uint64_t realtime = 1'796'036'030'589'596'763ull;
  const collect::clock_map epoch = collect::clock_map::fit({575'873'868'384, realtime, 10},
                                                           {576'873'868'384, realtime + 1'000'000'000, 10});
  BOOST_TEST(epoch.to_monotonic(realtime + 123'456'789) == 575'873'868'384 + 123'456'789);
}

BOOST_AUTO_TEST_CASE(when_cupti_keeps_its_own_clock_records_are_mapped_by_paired_samples) {
  // CUPTI refused our callback and runs at twice our rate from an epoch far away.
  const auto cupti_time = [](std::int64_t monotonic) {
    return static_cast<std::uint64_t>(monotonic) * 2 + 1'700'000'000'000'000'000ull;
  };
  const std::int64_t base = monotonic_now_ns();
  record_buffer buffer;
  buffer.add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1,
                      cupti_time(base + 1'000'000), cupti_time(base + 2'000'000), 1, 2))
      .add(kernel(1, cupti_time(base + 3'000'000), cupti_time(base + 5'000'000), "k"));
  auto backend = std::make_unique<fake_backend>(std::vector{buffer});
  backend->monotonic = false;
  backend->clock = [&cupti_time] { return std::optional<std::uint64_t>(cupti_time(monotonic_now_ns())); };
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();
  // The records lie 1 to 5 ms after `base`: with the stop's pairing 10 ms after the start's they are
  // interpolated between the two. Stopping at once put the pairings microseconds apart, so the fit's
  // slope extrapolated each pairing's jitter about 1000-fold (1 run in 8 missed 20 us under load).
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 1u);
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 1u);
  // Paired readings are within a few microseconds of each other here; the fit is as good as they are.
  const auto near = [](std::int64_t actual, std::int64_t expected) {
    return actual > expected - 20'000 && actual < expected + 20'000;
  };
  BOOST_TEST(near(t.intervals[0].start_ns, base + 1'000'000), t.intervals[0].start_ns - base);
  BOOST_TEST(near(t.intervals[0].end_ns, base + 2'000'000), t.intervals[0].end_ns - base);
  BOOST_TEST(near(t.device_ops[0].start_ns, base + 3'000'000), t.device_ops[0].start_ns - base);
  BOOST_TEST(near(t.device_ops[0].end_ns, base + 5'000'000), t.device_ops[0].end_ns - base);
  BOOST_TEST(t.warnings.empty());
}

BOOST_AUTO_TEST_CASE(an_unreadable_cupti_clock_without_our_callback_is_a_clock_anomaly) {
  auto backend = std::make_unique<fake_backend>();
  backend->monotonic = false;
  backend->clock = [] { return std::optional<std::uint64_t>(); };
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();
  trace t;
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::clock_anomaly);
}

BOOST_AUTO_TEST_CASE(the_loader_finds_the_toolkits_cupti_or_names_every_place_it_tried) {
  const bool loaded_before = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD) != nullptr;
  const collect::cupti_library missing = collect::load_cupti_library("/nonexistent/libcupti.so.13");
  if (loaded_before) {
    // A copy already in the process wins over the override: two copies would fight for the driver.
    BOOST_TEST(missing.loaded());
    BOOST_TEST(!contains(missing.path, "/nonexistent"));
  } else {
    BOOST_TEST(!missing.loaded());
    BOOST_TEST(contains(missing.error, "/nonexistent/libcupti.so.13: "));
    BOOST_TEST(contains(missing.error, "REGIONPROF_CUPTI_PATH"));
  }
  const collect::cupti_library found = collect::load_cupti_library("");
  BOOST_TEST_MESSAGE("CUPTI: " << found.path << " (major " << found.major << ")");
  BOOST_REQUIRE(found.loaded());
  BOOST_TEST(contains(found.path, "libcupti.so"));
  BOOST_TEST(found.major == 13u);
  BOOST_TEST(found.fn.cuptiActivityGetNextRecord != nullptr);
}

BOOST_AUTO_TEST_CASE(the_checking_macro_names_the_call_the_result_and_the_place) {
  const collect::cupti_library& cupti = loaded_cupti();
  const collect::cupti_status failed =
      collect::check_cupti(cupti, CUPTI_ERROR_UNKNOWN, "cuptiActivityEnable(kind)", "/a/b/file.cpp", 42);
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.message == "cuptiActivityEnable(kind) -> CUPTI_ERROR_UNKNOWN (999) at file.cpp:42");
  BOOST_TEST(collect::check_cupti(cupti, CUPTI_SUCCESS, "x", "f.cpp", 1).message.empty());
  const collect::cupti_status absent = collect::missing_cupti_entry("cuptiSubscribe_v2(a)", "dir/f.cpp", 7);
  BOOST_TEST(absent.result == CUPTI_ERROR_NOT_SUPPORTED);
  BOOST_TEST(absent.message == "cuptiSubscribe_v2(a) is not in the loaded CUPTI at f.cpp:7");
  // Through the macro, a real call: CUPTI's walker on an empty buffer.
  std::uint64_t empty[4] = {};
  CUpti_Activity* record = nullptr;
  const collect::cupti_status status = REGIONPROF_CUPTI(
      cupti, cuptiActivityGetNextRecord, reinterpret_cast<std::uint8_t*>(empty), std::size_t{0}, &record);
  BOOST_TEST(!status.ok());
  BOOST_TEST(contains(status.message, "cuptiActivityGetNextRecord(reinterpret_cast<std::uint8_t*>(empty), "));
  BOOST_TEST(contains(status.message, "at test_session.cpp:"));
}

BOOST_AUTO_TEST_SUITE_END()
