// Memory events through the capture (docs/design.md, rule 21; capture.hpp, record_memory_event): their
// two-record encoding, the trace::memory_events a session makes of them (thread and time as a range's),
// the memory cap's accounting, windows, and a rebase, with hand-computed values.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/trace/clock.hpp"
#include "support/warning_queries.hpp"

using namespace regionprof;
using capture_detail::memory_payload;
using regionprof::test::has_warning;
using regionprof::test::warning_text;

BOOST_TEST_DONT_PRINT_LOG_VALUE(regionprof::memory_event_kind)
BOOST_TEST_DONT_PRINT_LOG_VALUE(regionprof::capture_detail::record_kind)

namespace {

constexpr memory_event_kind allocation = memory_event_kind::allocation;
constexpr memory_event_kind free_event = memory_event_kind::free;
constexpr memory_event_kind out_of_memory = memory_event_kind::out_of_memory;

const cpu_interval& only_interval(const trace& t, std::string_view name) {
  const cpu_interval* found = nullptr;
  for (const cpu_interval& i : t.intervals) {
    if (t.strings.view(i.name) != name) continue;
    BOOST_REQUIRE_MESSAGE(found == nullptr, "two intervals named " << name);
    found = &i;
  }
  BOOST_REQUIRE_MESSAGE(found != nullptr, "no interval named " << name);
  return *found;
}

bool same_event(const memory_payload& a, const memory_payload& b) {
  return a.bytes == b.bytes && a.total_allocated == b.total_allocated && a.device == b.device && a.kind == b.kind;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_memory)

// Head: kind 7 in bits 45-47, the domain field (kind << 14) | (device + 1), bytes' low word in the name;
// payload: bytes' high word, then the total's two words. Every 64-bit value round-trips.
BOOST_AUTO_TEST_CASE(a_memory_event_is_two_records_that_round_trip_every_value) {
  using capture_detail::make_memory_payload_record;
  using capture_detail::make_record;
  using capture_detail::memory_domain_field;
  using capture_detail::record_kind;
  BOOST_TEST(memory_domain_field(cpu_memory, allocation) == 0u);
  BOOST_TEST(memory_domain_field(3, free_event) == 0x4004u);  // 1 << 14 | 4
  BOOST_TEST(memory_domain_field(max_memory_device, out_of_memory) == 0xBFFFu);  // 2 << 14 | 0x3FFF
  const memory_payload cases[] = {
      {32768, 32768, cpu_memory, allocation},
      {-32768, 0, 0, free_event},
      {std::int64_t{5} << 40, memory_event::no_total, max_memory_device, out_of_memory},
      {std::numeric_limits<std::int64_t>::min() + 1, std::numeric_limits<std::int64_t>::max(), 7, free_event},
  };
  for (const memory_payload& event : cases) {
    const capture_detail::record head =
        make_record(9, record_kind::memory, memory_domain_field(event.device, event.kind),
                    static_cast<std::uint32_t>(static_cast<std::uint64_t>(event.bytes)));
    BOOST_TEST(head.kind() == record_kind::memory);
    BOOST_TEST(head.tick_delta() == 9u);
    BOOST_TEST(same_event(capture_detail::memory_payload_of(head, make_memory_payload_record(event)), event),
               "bytes " << event.bytes << " total " << event.total_allocated << " device " << event.device);
  }
  // 5 << 40 allocated: the payload's low word holds bytes' high word (5 << 8), no total is INT64_MIN.
  const capture_detail::record payload = make_memory_payload_record(cases[2]);
  BOOST_TEST(payload.packed_low == 0x500u);
  BOOST_TEST(payload.packed_high == 0u);
  BOOST_TEST(payload.name == 0x80000000u);
}

// An allocation inside a range on this thread and a free on another thread become trace memory events
// exactly: the bytes, totals, devices and kinds given, each on the thread that reported it, at a time
// within the range (first) and within the calls' brackets (both), on the ranges' clock.
BOOST_AUTO_TEST_CASE(memory_events_become_trace_memory_events_on_their_thread_at_their_time) {
  capture_session session;
  const std::int64_t before = monotonic_now_ns();
  nvtxRangePushA("linear");
  BOOST_TEST(record_memory_event(32768, 32768, cpu_memory, allocation) == 1);
  nvtxRangePop();
  const std::int64_t between = monotonic_now_ns();
  std::int64_t other_tid = 0;
  int recorded[2] = {};
  std::thread other([&other_tid, &recorded] {  // checked on the test's thread: Boost.Test is not thread-safe
    nvtxRangePushA("other");
    recorded[0] = record_memory_event(-4096, 1 << 20, 1, free_event);
    recorded[1] = record_memory_event(1 << 30, 1 << 20, 1, out_of_memory);
    nvtxRangePop();
    other_tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  });
  other.join();
  BOOST_TEST(recorded[0] == 1);
  BOOST_TEST(recorded[1] == 1);
  const std::int64_t after = monotonic_now_ns();
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_TEST(result.stats.memory_events == 3u);
  BOOST_TEST(result.stats.records == 4u + 3u * 2u);  // two ranges, three events of two records
  BOOST_TEST(result.stats.dropped_memory_events == 0u);
  BOOST_TEST(t.warnings.empty());
  BOOST_REQUIRE_EQUAL(t.memory_events.size(), 3u);

  const cpu_interval& linear = only_interval(t, "linear");
  const cpu_interval& in_other = only_interval(t, "other");
  const memory_event& allocated = t.memory_events[0];
  BOOST_TEST(allocated.bytes == 32768);
  BOOST_TEST(allocated.total_allocated == 32768);
  BOOST_TEST(allocated.device == cpu_memory);
  BOOST_TEST(allocated.kind == allocation);
  BOOST_TEST(allocated.thread == linear.thread);
  BOOST_TEST(allocated.time_ns >= linear.start_ns);
  BOOST_TEST(allocated.time_ns <= linear.end_ns);
  BOOST_TEST(allocated.time_ns >= before - 1000);
  BOOST_TEST(allocated.time_ns <= between + 1000);

  const memory_event& freed = t.memory_events[1];
  const memory_event& failed = t.memory_events[2];
  BOOST_TEST(freed.bytes == -4096);
  BOOST_TEST(freed.total_allocated == 1 << 20);
  BOOST_TEST(freed.device == 1);
  BOOST_TEST(freed.kind == free_event);
  BOOST_TEST(failed.bytes == 1 << 30);
  BOOST_TEST(failed.kind == out_of_memory);
  for (const memory_event* e : {&freed, &failed}) {
    BOOST_TEST(e->thread == in_other.thread);
    BOOST_TEST(t.threads.at(e->thread).tid == other_tid);
    BOOST_TEST(e->time_ns >= in_other.start_ns);
    BOOST_TEST(e->time_ns <= in_other.end_ns);
    BOOST_TEST(e->time_ns <= after + 1000);
  }
  BOOST_TEST(freed.time_ns <= failed.time_ns);
  BOOST_TEST(in_other.thread != linear.thread);
}

// Outside a session nothing is recorded (0); a device or kind out of range, bytes of the wrong sign or a
// negative total is refused (-1) and leaves nothing in the trace.
BOOST_AUTO_TEST_CASE(memory_events_outside_a_session_or_out_of_range_record_nothing) {
  BOOST_TEST(record_memory_event(64, 64, cpu_memory, allocation) == 0);
  capture_session session;
  BOOST_TEST(record_memory_event(64, 64, -2, allocation) == -1);
  BOOST_TEST(record_memory_event(64, 64, max_memory_device + 1, allocation) == -1);
  BOOST_TEST(record_memory_event(64, 64, 0, static_cast<memory_event_kind>(3)) == -1);
  // Bytes of the wrong sign for the kind, or a negative total: refused.
  BOOST_TEST(record_memory_event(0, 64, cpu_memory, allocation) == -1);
  BOOST_TEST(record_memory_event(64, 64, cpu_memory, free_event) == -1);
  BOOST_TEST(record_memory_event(std::numeric_limits<std::int64_t>::min(), 64, cpu_memory, free_event) == -1);
  BOOST_TEST(record_memory_event(-1, 64, cpu_memory, out_of_memory) == -1);
  BOOST_TEST(record_memory_event(64, -5, cpu_memory, allocation) == -1);
  BOOST_TEST(record_memory_event(64, 64, max_memory_device, allocation) == 1);
  capture_result result = session.stop();
  BOOST_TEST(record_memory_event(64, 64, cpu_memory, allocation) == 0);
  BOOST_REQUIRE_EQUAL(result.data.memory_events.size(), 1u);
  BOOST_TEST(result.data.memory_events[0].device == max_memory_device);
  BOOST_TEST(result.stats.records == 2u);
}

// A chunk holds 5458 records. One range push (1 record) and 2728 events (5456 records) leave one
// record free: the next event takes a second chunk whole (the free record stays unused). With a cap of
// one chunk that event is dropped instead, counted as a memory event, and so is the thread's pop after
// it, as an NVTX record: both in DROPPED_HOST_RECORDS.
BOOST_AUTO_TEST_CASE(an_event_never_splits_across_chunks_and_a_drop_at_the_cap_is_counted) {
  static_assert(capture_detail::records_per_chunk == 5458);
  constexpr int fitting = 2728;
  for (const std::size_t cap_chunks : {std::size_t{2}, std::size_t{1}}) {
    BOOST_TEST_CONTEXT("cap of " << cap_chunks << " chunk(s)") {
      capture_options options;
      options.memory_cap_bytes = cap_chunks * capture_detail::chunk_bytes;
      capture_session session(options);
      nvtxRangePushA("filling");
      for (int i = 0; i < fitting; ++i) BOOST_REQUIRE(record_memory_event(8, 8 * (i + 1), cpu_memory, allocation) == 1);
      const int last = record_memory_event(16, 8 * fitting + 16, cpu_memory, allocation);
      nvtxRangePop();
      capture_result result = session.stop();
      const trace& t = result.data;
      if (cap_chunks == 2) {
        BOOST_TEST(last == 1);
        BOOST_TEST(result.stats.chunk_bytes == 2 * capture_detail::chunk_bytes);
        BOOST_TEST(result.stats.memory_events == fitting + 1u);
        BOOST_REQUIRE_EQUAL(t.memory_events.size(), fitting + 1u);
        BOOST_TEST(t.memory_events.back().bytes == 16);
        BOOST_TEST(t.memory_events.back().total_allocated == 8 * fitting + 16);
        BOOST_TEST(t.intervals.size() == 1u);
        BOOST_TEST(result.stats.records == 2u + 2u * (fitting + 1u));
        BOOST_TEST(!has_warning(t, warning_code::dropped_host_records));
      } else {
        BOOST_TEST(last == 0);
        BOOST_TEST(result.stats.chunk_bytes == capture_detail::chunk_bytes);
        BOOST_TEST(result.stats.memory_events == std::uint64_t{fitting});
        BOOST_TEST(result.stats.dropped_memory_events == 1u);
        BOOST_TEST(result.stats.dropped_records == 1u);  // the pop
        BOOST_TEST(result.stats.lost_to_cap == 1u);      // "filling" lost its pop
        BOOST_TEST(t.memory_events.size() == std::size_t{fitting});
        BOOST_TEST(t.intervals.empty());
        const std::string message = warning_text(t, warning_code::dropped_host_records);
        BOOST_TEST(message.starts_with("1 NVTX record(s) and 1 memory event(s) were dropped"), message);
      }
      for (std::size_t i = 0; i < static_cast<std::size_t>(fitting); ++i) {
        BOOST_REQUIRE(t.memory_events[i].total_allocated == static_cast<std::int64_t>(8 * (i + 1)));
      }
    }
  }
}

// Memory events before a window's cut are the window's; those after it wait for the next window or
// stop(). Runs: `step` ranges, one allocation inside each.
BOOST_AUTO_TEST_CASE(memory_events_go_to_the_window_of_their_time) {
  const auto is_step = [](std::string_view name, std::string_view) { return name == "step"; };
  capture_session session;
  for (int run = 0; run < 3; ++run) {
    nvtxRangePushA("step");
    record_memory_event(100 + run, 100 + run, cpu_memory, allocation);
    nvtxRangePop();
  }
  record_memory_event(-100, 5, cpu_memory, free_event);  // after the third step: not in its window
  std::optional<capture_result> window = session.cut_window(3, is_step);
  BOOST_REQUIRE(window.has_value());
  BOOST_REQUIRE_EQUAL(window->data.memory_events.size(), 3u);
  for (int run = 0; run < 3; ++run) BOOST_TEST(window->data.memory_events[run].bytes == 100 + run);
  BOOST_TEST(window->stats.memory_events == 3u);
  capture_result rest = session.stop();
  BOOST_REQUIRE_EQUAL(rest.data.memory_events.size(), 1u);
  BOOST_TEST(rest.data.memory_events[0].bytes == -100);
  BOOST_TEST(rest.data.memory_events[0].total_allocated == 5);
  BOOST_REQUIRE_EQUAL(rest.data.threads.size(), 1u);
  BOOST_TEST(rest.data.memory_events[0].thread == 0u);
}

// An event whose tick delta does not fit the chunk's 45 bits rebases as a range record does: a fresh
// chunk based just below it, both records in it, the time exact.
BOOST_AUTO_TEST_CASE(a_memory_event_past_45_bits_of_delta_rebases_and_keeps_its_time) {
  capture_session session;
  nvtxRangePushA("before");
  nvtxRangePop();
  const std::uint32_t epoch = capture_detail::active_epoch.load(std::memory_order_relaxed);
  capture_detail::thread_buffer* b = capture_detail::prepare<capture_detail::memory_event_records>(epoch);
  BOOST_REQUIRE(b != nullptr);
  const capture_detail::chunk* first = b->current;
  const std::uint64_t near = b->base + 1000;
  const std::uint64_t far = b->base + capture_detail::max_tick_delta + 1;
  BOOST_TEST(capture_detail::append_memory(b, near, {1, 1, cpu_memory, allocation}));
  BOOST_TEST(b->current == first);
  BOOST_TEST(capture_detail::append_memory(b, far, {2, 3, 0, allocation}));
  BOOST_TEST(b->current != first);
  BOOST_TEST(b->base == far - capture_detail::base_margin_ticks);
  BOOST_TEST(b->used == 2u);
  capture_result result = session.stop();
  BOOST_REQUIRE_EQUAL(result.data.memory_events.size(), 2u);
  const memory_event& a = result.data.memory_events[0];
  const memory_event& z = result.data.memory_events[1];
  BOOST_TEST(z.bytes == 2);
  BOOST_TEST(z.total_allocated == 3);
  BOOST_TEST(z.device == 0);
  const double expected_ns = static_cast<double>(far - near) * result.stats.ns_per_tick;
  BOOST_TEST(std::abs(static_cast<double>(z.time_ns - a.time_ns) - expected_ns) <= 2.0);
}

BOOST_AUTO_TEST_SUITE_END()
