// The capture's 12-byte records: the encoding, range ids, and the rebase of a chunk when a tick delta
// does not fit its 45 bits. A real rebase needs a thread idle for hours, so these tests feed synthetic
// tick values through the hot path's own prepare() + append().
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/trace/clock.hpp"

using namespace regionprof;
using capture_detail::record_kind;

BOOST_TEST_DONT_PRINT_LOG_VALUE(regionprof::capture_detail::record_kind)

namespace {

std::uint32_t string_id(std::string_view text) { return capture_detail::state().strings.intern(text).first; }

/// Appends one record with `ticks` to the calling thread's buffer, as an NVTX callback would.
std::uint32_t put(record_kind kind, std::uint64_t ticks, std::uint32_t name = 0) {
  const std::uint32_t epoch = capture_detail::active_epoch.load(std::memory_order_relaxed);
  capture_detail::thread_buffer* b = capture_detail::prepare(epoch);
  BOOST_REQUIRE(b != nullptr);
  return capture_detail::append(b, ticks, kind, 0, name);
}

const cpu_interval& interval_named(const capture_result& result, std::string_view name) {
  const auto& intervals = result.data.intervals;
  const auto found = std::find_if(intervals.begin(), intervals.end(),
                                  [&](const cpu_interval& i) { return result.data.strings.view(i.name) == name; });
  BOOST_REQUIRE_MESSAGE(found != intervals.end(), "no interval named " << name);
  return *found;
}

/// `later - earlier` in ns for two ticks values `tick_span` apart: exact up to the floor of each
/// conversion (1 ns) and the double's rounding (far below 1 ns for spans of 2^45 ticks).
void check_span(std::int64_t earlier_ns, std::int64_t later_ns, std::uint64_t tick_span, double ns_per_tick) {
  const double expected = static_cast<double>(tick_span) * ns_per_tick;
  BOOST_TEST(std::abs(static_cast<double>(later_ns - earlier_ns) - expected) <= 2.0,
             "span " << later_ns - earlier_ns << " ns, expected " << expected << " ns");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_records)

BOOST_AUTO_TEST_CASE(a_record_packs_delta_kind_domain_and_name_into_12_bytes) {
  using capture_detail::make_record;
  // packed = 1 | 1 << 45 | 2 << 48: low word 1, high word (1 << 13) | (2 << 16) = 0x22000.
  const capture_detail::record small = make_record(1, record_kind::push, 2, 3);
  BOOST_TEST(small.packed_low == 1u);
  BOOST_TEST(small.packed_high == 0x22000u);
  BOOST_TEST(small.name == 3u);
  BOOST_TEST(small.tick_delta() == 1u);
  BOOST_TEST(small.kind() == record_kind::push);
  BOOST_TEST(small.domain() == 2u);

  // Every field at its widest: no field spills into another.
  const capture_detail::record wide = make_record(capture_detail::max_tick_delta, record_kind::mark, 0xFFFF, 0xFFFFFFFFu);
  BOOST_TEST(wide.tick_delta() == (std::uint64_t{1} << 45) - 1);
  BOOST_TEST(wide.kind() == record_kind::mark);
  BOOST_TEST(wide.domain() == 0xFFFFu);
  BOOST_TEST(wide.name == 0xFFFFFFFFu);
  const capture_detail::record zero_delta = make_record(0, record_kind::end, 0xFFFF, 0);
  BOOST_TEST(zero_delta.tick_delta() == 0u);
  BOOST_TEST(zero_delta.kind() == record_kind::end);
  const capture_detail::record max_delta = make_record(capture_detail::max_tick_delta, record_kind::pop, 0, 0);
  BOOST_TEST(max_delta.kind() == record_kind::pop);
  BOOST_TEST(max_delta.domain() == 0u);

  // 64 KiB holds a 40-byte header and 5458 records: 12.007 bytes per record, the budget (docs/design.md, Budgets) is 16.
  BOOST_TEST(capture_detail::records_per_chunk == 5458u);
  BOOST_TEST(static_cast<double>(capture_detail::chunk_bytes) / capture_detail::records_per_chunk < 12.01);
}

BOOST_AUTO_TEST_CASE(range_ids_fit_an_end_record_and_never_take_the_reserved_values) {
  using capture_detail::range_id;
  BOOST_TEST(range_id(1, 0) == 8192u);  // the first chunk's first record: serial 1 << 13
  BOOST_TEST(range_id(1, 5457) == 8192u + 5457u);
  BOOST_TEST(range_id(2, 0) == 2u * 8192u);
  // The largest id is below 2^48 (name 32 bits + domain 16 bits of an end record).
  BOOST_TEST(range_id(capture_detail::range_id_serial_mask, capture_detail::records_per_chunk - 1) <
             (std::uint64_t{1} << 48));
  // Serials 2^35 apart share ids (documented: 2 PiB of records apart, never within one session).
  BOOST_TEST(range_id((std::uint64_t{1} << 35) + 7, 9) == range_id(7, 9));

  // An end record carries the id through its name and domain fields.
  const std::uint64_t id = range_id(capture_detail::range_id_serial_mask, 4321);
  const capture_detail::record end = capture_detail::make_record(0, record_kind::end,
                                                                 static_cast<std::uint16_t>(id >> 32),
                                                                 static_cast<std::uint32_t>(id));
  BOOST_TEST((end.name | (static_cast<std::uint64_t>(end.domain()) << 32)) == id);
}

// The delta limit exactly: a record max_tick_delta after the base fits the chunk, one tick more hands
// the chunk over and starts a fresh one; a record below the base of an empty chunk rebases it in place,
// and below the base of a chunk in use starts a fresh one. The trace keeps every tick exact.
BOOST_AUTO_TEST_CASE(a_tick_delta_past_45_bits_rebases_the_chunk_and_keeps_exact_times) {
  const std::uint32_t early = string_id("early");
  const std::uint32_t far = string_id("far");
  const std::uint32_t after = string_id("after");
  capture_session session;
  const std::uint32_t epoch = capture_detail::active_epoch.load(std::memory_order_relaxed);
  capture_detail::thread_buffer* b = capture_detail::prepare(epoch);
  BOOST_REQUIRE(b != nullptr);
  BOOST_REQUIRE(b->used == 0u);
  const capture_detail::chunk* first = b->current;
  const std::uint64_t first_base = b->base;

  // Below the base of the still empty chunk: rebased in place.
  const std::uint64_t t1 = first_base - 5;
  BOOST_TEST(put(record_kind::push, t1, early) == 0u);
  BOOST_TEST(b->current == first);
  BOOST_TEST(b->base == t1 - capture_detail::base_margin_ticks);
  const std::uint64_t t2 = t1 + 100;
  BOOST_TEST(put(record_kind::pop, t2) == 1u);

  // Exactly max_tick_delta past the base: still fits.
  const std::uint64_t t3 = b->base + capture_detail::max_tick_delta;
  BOOST_TEST(put(record_kind::push, t3, far) == 2u);
  BOOST_TEST(b->current == first);

  // One tick more: a fresh chunk based just below it.
  const std::uint64_t t4 = t3 + 1;
  BOOST_TEST(put(record_kind::pop, t4) == 0u);
  BOOST_TEST(b->current != first);
  BOOST_TEST(b->base == t4 - capture_detail::base_margin_ticks);
  const std::uint64_t t5 = t4 + 7;
  BOOST_TEST(put(record_kind::push, t5, after) == 1u);
  BOOST_TEST(put(record_kind::pop, t5 + 3) == 2u);

  // A real range now reads the clock hours below this chunk's base: a third chunk, and real times.
  const std::int64_t before_ns = monotonic_now_ns();
  nvtxRangePushA("real");
  nvtxRangePop();
  const std::int64_t after_ns = monotonic_now_ns();

  capture_result result = session.stop();
  BOOST_TEST(result.stats.records == 8u);
  BOOST_TEST(result.stats.dropped_records == 0u);
  BOOST_TEST(result.stats.chunk_bytes == 3 * capture_detail::chunk_bytes);
  BOOST_REQUIRE_EQUAL(result.data.intervals.size(), 4u);
  BOOST_TEST(result.data.warnings.empty());

  const double ns_per_tick = result.stats.ns_per_tick;
  const cpu_interval& e = interval_named(result, "early");
  const cpu_interval& f = interval_named(result, "far");
  const cpu_interval& a = interval_named(result, "after");
  check_span(e.start_ns, e.end_ns, t2 - t1, ns_per_tick);
  check_span(e.start_ns, f.start_ns, t3 - t1, ns_per_tick);  // 2^45 ticks and more: hours
  check_span(f.start_ns, f.end_ns, 1, ns_per_tick);
  check_span(f.end_ns, a.start_ns, 7, ns_per_tick);
  check_span(a.start_ns, a.end_ns, 3, ns_per_tick);
  BOOST_TEST(f.start_ns - e.start_ns > 3600'000'000'000);  // over an hour at any clock up to 9.7 GHz

  const cpu_interval& real = interval_named(result, "real");
  BOOST_TEST(real.start_ns >= before_ns - 1000);
  BOOST_TEST(real.end_ns <= after_ns + 1000);
  BOOST_TEST(real.start_ns <= real.end_ns);
}

// A rebase needs a fresh chunk; past the memory cap it is refused like any other chunk: the record and
// every later one of the thread are dropped and counted, and the range it would have closed is lost.
BOOST_AUTO_TEST_CASE(a_rebase_past_the_memory_cap_drops_and_counts) {
  capture_options options;
  options.memory_cap_bytes = capture_detail::chunk_bytes;  // one chunk
  capture_session session(options);
  nvtxRangePushA("kept");
  capture_detail::thread_buffer* b = capture_detail::this_thread_buffer;
  BOOST_REQUIRE(b != nullptr);
  BOOST_TEST(put(record_kind::pop, b->base + capture_detail::max_tick_delta + 1) == capture_detail::dropped_index);
  nvtxRangePushA("dropped");
  nvtxRangePop();
  capture_result result = session.stop();
  BOOST_TEST(result.stats.records == 1u);
  BOOST_TEST(result.stats.dropped_records == 3u);
  BOOST_TEST(result.stats.chunk_bytes == capture_detail::chunk_bytes);
  BOOST_TEST(result.data.intervals.empty());
  BOOST_TEST(result.stats.lost_to_cap == 1u);  // "kept" lost its pop
  BOOST_TEST(result.stats.open_at_stop == 0u);
  const auto dropped = std::find_if(result.data.warnings.begin(), result.data.warnings.end(),
                                    [](const warning& w) { return w.code == warning_code::dropped_host_records; });
  BOOST_REQUIRE(dropped != result.data.warnings.end());
  BOOST_TEST(dropped->message.find("3 NVTX record(s) were dropped") != std::string::npos, dropped->message);
  BOOST_TEST(std::none_of(result.data.warnings.begin(), result.data.warnings.end(),
                          [](const warning& w) { return w.code == warning_code::unbalanced_ranges; }));
}

BOOST_AUTO_TEST_SUITE_END()
