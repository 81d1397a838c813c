// Device records cut into windows (`regionprof run --window-runs`; docs/design.md, "Long runs: windows"):
// real CUPTI record structs through the production path (the pool's callbacks, CUPTI's walker, the
// decoder), cut by activity_decoder::take_window and device_session::cut_window. Each record's window is
// worked out by hand in the comments: its launch (the API call with its correlation id) decides.
#include <algorithm>
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

constexpr std::uint32_t pid = 5151;
constexpr std::uint32_t tid = 5152;
constexpr auto launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

collect::api_record launch_call(std::uint32_t correlation, std::uint64_t start) {
  return api_call(CUPTI_ACTIVITY_KIND_RUNTIME, launch, correlation, start, start + 100, pid, tid);
}

/// The names of `t`'s device ops, in trace order.
std::vector<std::string> op_names(const trace& t) {
  std::vector<std::string> names;
  for (const device_op& op : t.device_ops) names.emplace_back(t.strings.view(op.name));
  return names;
}

/// The correlation ids of `t`'s API calls (CPU intervals with one), sorted.
std::vector<std::uint32_t> call_ids(const trace& t) {
  std::vector<std::uint32_t> ids;
  for (const cpu_interval& i : t.intervals) {
    if (i.kind == interval_kind::runtime_api || i.kind == interval_kind::driver_api) ids.push_back(i.correlation_id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<const warning*> warnings_with(const trace& t, warning_code code) {
  std::vector<const warning*> found;
  for (const warning& w : t.warnings) {
    if (w.code == code) found.push_back(&w);
  }
  return found;
}

using names = std::vector<std::string>;
using ids = std::vector<std::uint32_t>;

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_windows)

BOOST_AUTO_TEST_CASE(two_windows_each_get_the_device_ops_of_their_launches) {
  // Cut at 5000 ns (the end of window 0's last run; the fake backend's clock is the identity).
  record_buffer first;  // completed before the cut
  first.add(launch_call(1, 1000))
      .add(kernel(1, 2000, 2500, "k_window0"))   // launched in window 0: window 0
      .add(launch_call(2, 6000))                 // launched after the cut: carried with its kernel
      .add(kernel(2, 6500, 7000, "k_window1"))   // window 1
      .add(launch_call(3, 3000));                // window 0; its kernel is still in CUPTI's buffers
  record_buffer second;  // completed after window 0 was written
  second.add(kernel(3, 5200, 5400, "k_late"))    // its launch (3) is window 0's: late
      .add(launch_call(4, 4000))                 // started before the written cut: late
      .add(kernel(4, 5500, 5600, "k_late_too"))  // its launch came late: late
      .add(launch_call(5, 8000))                 // window 1
      .add(memset_op(5, 8200, 8300, 64));        // window 1
  auto backend = std::make_unique<fake_backend>(std::vector{first});
  fake_backend* spy = backend.get();
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();

  trace window0;
  session->cut_window(window0, 5000, false);
  BOOST_TEST(spy->unforced_flushes == 1);  // a window thread's cut does not force CUPTI's buffers
  BOOST_TEST(spy->synchronizations == 0);
  BOOST_TEST(window0.device_tracing);
  BOOST_TEST(op_names(window0) == (names{"k_window0"}), boost::test_tools::per_element());
  BOOST_TEST(call_ids(window0) == (ids{1, 3}), boost::test_tools::per_element());
  BOOST_TEST(window0.warnings.empty());
  BOOST_TEST(spy->disables == 0);  // collection goes on

  spy->add(second);
  trace window1;
  session->stop(window1);
  BOOST_TEST(op_names(window1) == (names{"k_window1", "Memset (Device)"}), boost::test_tools::per_element());
  BOOST_TEST(call_ids(window1) == (ids{2, 5}), boost::test_tools::per_element());
  const auto late = warnings_with(window1, warning_code::late_device_records);
  BOOST_REQUIRE_EQUAL(late.size(), 1u);
  BOOST_TEST(late[0]->source == warning_source::cupti);
  BOOST_TEST(late[0]->message.find("3 device activity records") == 0u);  // k_late, call 4, k_late_too
}

BOOST_AUTO_TEST_CASE(a_launch_not_yet_decoded_is_placed_by_its_correlation_id) {
  const fake_backend backend;
  collect::activity_decoder decoder(backend);
  record_buffer buffer;
  buffer.add(launch_call(10, 1000))
      .add(launch_call(12, 2000))
      .add(kernel(11, 2100, 2200, "id_11"))      // no call 11 yet; 11 <= 12, window 0's highest: window 0
      .add(kernel(13, 2300, 2400, "id_13"))      // 13 > 12: maybe a later launch: carried
      .add(memcpy_op(0, 4000, 4100, 8))          // no id, started before the cut: window 0
      .add(memcpy_op(0, 6000, 6100, 8))          // no id, after it: carried
      .add(sync_op(12, 2500, 2600, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));  // with call 12
  decoder.decode_buffer(buffer.bytes().data(), buffer.valid());
  BOOST_TEST(!decoder.windows_taken());

  collect::activity_decoder window0 = decoder.take_window(5000, collect::clock_map{}, false);
  BOOST_TEST(decoder.windows_taken());
  BOOST_TEST(window0.counts().late_records == 0u);
  trace t0;
  window0.append_to(t0, collect::clock_map{});
  BOOST_TEST(op_names(t0) == (names{"id_11", "Memcpy HtoD (Pageable -> Device)"}), boost::test_tools::per_element());
  BOOST_TEST(call_ids(t0) == (ids{10, 12}), boost::test_tools::per_element());
  BOOST_TEST(std::count_if(t0.intervals.begin(), t0.intervals.end(),
                           [](const cpu_interval& i) { return i.kind == interval_kind::range; }) == 1);  // the sync

  // Call 11 arrives now: it started before the written cut, so it and nothing else is late; 13 stays
  // carried until the last window takes everything left.
  record_buffer more;
  more.add(launch_call(11, 1500)).add(launch_call(13, 5500));
  decoder.decode_buffer(more.bytes().data(), more.valid());
  collect::activity_decoder last = decoder.take_window(0, collect::clock_map{}, true);
  BOOST_TEST(last.counts().late_records == 1u);
  trace t1;
  last.append_to(t1, collect::clock_map{});
  BOOST_TEST(op_names(t1) == (names{"id_13", "Memcpy HtoD (Pageable -> Device)"}), boost::test_tools::per_element());
  BOOST_TEST(call_ids(t1) == (ids{13}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_record_with_an_id_of_a_written_window_is_late) {
  const fake_backend backend;
  collect::activity_decoder decoder(backend);
  record_buffer buffer;
  buffer.add(launch_call(20, 1000)).add(launch_call(21, 6000));
  decoder.decode_buffer(buffer.bytes().data(), buffer.valid());
  collect::activity_decoder window0 = decoder.take_window(5000, collect::clock_map{}, false);
  BOOST_TEST(window0.counts().late_records == 0u);
  // 19 is below 20, the highest id window 0 holds, and no call carries it: window 0 was written
  // without it. 21's kernel goes with its carried call.
  record_buffer later;
  later.add(kernel(19, 5100, 5200, "old")).add(kernel(20, 5300, 5400, "old_too")).add(kernel(21, 6100, 6200, "new"));
  decoder.decode_buffer(later.bytes().data(), later.valid());
  collect::activity_decoder window1 = decoder.take_window(10000, collect::clock_map{}, false);
  BOOST_TEST(window1.counts().late_records == 2u);
  trace t1;
  window1.append_to(t1, collect::clock_map{});
  BOOST_TEST(op_names(t1) == (names{"new"}), boost::test_tools::per_element());
  std::vector<warning> warnings = collect::collection_warnings(window1.counts(), {}, {});
  BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
  BOOST_TEST(warnings[0].code == warning_code::late_device_records);
}

BOOST_AUTO_TEST_CASE(the_buffers_of_a_cut_go_back_to_the_pool) {
  // small_pool() has 4 buffers: three cuts of 4 full buffers each only fit if every cut hands its
  // buffers back (else the 5th request is refused and its records dropped).
  auto backend = std::make_unique<fake_backend>();
  fake_backend* spy = backend.get();
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();
  std::uint32_t id = 1;
  for (int window = 0; window < 3; ++window) {
    for (int b = 0; b < 4; ++b, ++id) {
      record_buffer buffer;
      buffer.add(launch_call(id, 1000 * id)).add(kernel(id, 1000 * id + 200, 1000 * id + 300, "k"));
      spy->add(buffer);
    }
    trace t;
    session->cut_window(t, 1000 * static_cast<std::int64_t>(id), false);  // after this window's 4 launches
    BOOST_TEST(t.device_ops.size() == 4u);
    BOOST_TEST(t.warnings.empty());
  }
  trace last;
  session->stop(last);
  BOOST_TEST(last.device_ops.empty());
  BOOST_TEST(warnings_with(last, warning_code::dropped_device_records).empty());
  BOOST_TEST(warnings_with(last, warning_code::late_device_records).empty());
}

BOOST_AUTO_TEST_CASE(a_cut_at_exit_waits_for_the_device_and_forces_the_flush) {
  record_buffer buffer;
  buffer.add(launch_call(1, 1000)).add(kernel(1, 2000, 2500, "k"));
  auto backend = std::make_unique<fake_backend>(std::vector{buffer});
  fake_backend* spy = backend.get();
  auto session = collect::make_device_session(small_pool(), std::move(backend));
  session->start();
  trace t;
  session->cut_window(t, 5000, true);
  BOOST_TEST(spy->synchronizations == 1);
  BOOST_TEST(spy->flushes == 1);
  BOOST_TEST(spy->unforced_flushes == 0);
  BOOST_TEST(op_names(t) == (names{"k"}), boost::test_tools::per_element());
  trace last;
  session->stop(last);
}

BOOST_AUTO_TEST_CASE(without_windows_stop_is_unchanged) {
  // No cut_window: stop() decodes everything into the one trace, and nothing is late.
  record_buffer buffer;
  buffer.add(launch_call(1, 1000)).add(kernel(1, 2000, 2500, "k"));
  auto session = collect::make_device_session(small_pool(), std::make_unique<fake_backend>(std::vector{buffer}));
  session->start();
  trace t;
  session->stop(t);
  BOOST_TEST(op_names(t) == (names{"k"}), boost::test_tools::per_element());
  BOOST_TEST(warnings_with(t, warning_code::late_device_records).empty());
}

BOOST_AUTO_TEST_SUITE_END()
