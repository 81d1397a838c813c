// The capture tool through the static route: real NVTX calls from real threads, captured exactly.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <latch>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_route.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"
#include "regionprof/trace/clock.hpp"
#include "support/child_process.hpp"
#include "support/warning_queries.hpp"

using namespace regionprof;
using regionprof::test::count_warnings;
using regionprof::test::find_warning;
using regionprof::test::has_warning;
using regionprof::test::warning_text;

namespace {

std::int64_t this_tid() { return static_cast<std::int64_t>(::syscall(SYS_gettid)); }

std::string_view name_of(const trace& t, const cpu_interval& i) { return t.strings.view(i.name); }
std::string_view domain_of(const trace& t, const cpu_interval& i) { return t.strings.view(t.domains.at(i.domain)); }

/// The trace thread of OS thread `tid`; fails the test when absent.
thread_index thread_of(const trace& t, std::int64_t tid) {
  for (thread_index i = 0; i < t.threads.size(); ++i) {
    if (t.threads[i].tid == tid) return i;
  }
  BOOST_FAIL("no trace thread for tid " << tid);
  return 0;
}

std::vector<cpu_interval> intervals_on(const trace& t, thread_index thread) {
  std::vector<cpu_interval> out;
  for (const cpu_interval& i : t.intervals) {
    if (i.thread == thread) out.push_back(i);
  }
  return out;
}


nvtxEventAttributes_t registered(nvtxStringHandle_t handle) { return detail::registered_attributes(handle); }

nvtxEventAttributes_t ascii(const char* text) {
  nvtxEventAttributes_t attributes = detail::registered_attributes(nullptr);
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text;
  return attributes;
}

nvtxEventAttributes_t wide(const wchar_t* text) {
  nvtxEventAttributes_t attributes = detail::registered_attributes(nullptr);
  attributes.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  attributes.message.unicode = text;
  return attributes;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture)

BOOST_AUTO_TEST_CASE(tool_is_attached_through_the_static_route) {
  nvtxInitialize(nullptr);
  BOOST_TEST(nvtx_capture_attached());
  BOOST_TEST(std::string(capture_detail::route_name) == "static");
}

// 16 threads x 100k ranges: every range, its name, domain and nesting. Threads 0-7 exit before the
// capture stops (their chunks are handed over at exit); threads 8-15 are still alive (their current
// chunks are copied at stop).
BOOST_AUTO_TEST_CASE(sixteen_threads_hundred_thousand_ranges_each) {
  constexpr int thread_count = 16;
  constexpr int groups = 10'000;  // each: one registered outer range holding 9 ASCII inner ranges
  constexpr int inner_per_group = 9;
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("capture_test");
  const nvtxStringHandle_t outer_name = nvtxDomainRegisterStringA(domain, "outer");
  const nvtxEventAttributes_t outer = registered(outer_name);

  std::vector<std::int64_t> tids(thread_count);
  std::latch recorded(thread_count);
  std::latch stopped(1);
  std::vector<std::thread> threads;
  capture_session session;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      tids[t] = this_tid();
      char inner_names[3][32];
      for (int k = 0; k < 3; ++k) std::snprintf(inner_names[k], sizeof(inner_names[k]), "inner_%d_%d", t, k);
      for (int g = 0; g < groups; ++g) {
        nvtxDomainRangePushEx(domain, &outer);
        for (int j = 0; j < inner_per_group; ++j) {
          nvtxRangePushA(inner_names[j % 3]);
          nvtxRangePop();
        }
        nvtxDomainRangePop(domain);
      }
      recorded.count_down();
      if (t >= thread_count / 2) stopped.wait();
    });
  }
  for (int t = 0; t < thread_count / 2; ++t) threads[t].join();
  recorded.wait();
  capture_result result = session.stop();
  stopped.count_down();
  for (int t = thread_count / 2; t < thread_count; ++t) threads[t].join();

  const trace& tr = result.data;
  BOOST_TEST(tr.warnings.empty());
  BOOST_TEST(result.stats.dropped_records == 0u);
  BOOST_TEST(result.stats.records == 2u * thread_count * groups * (1 + inner_per_group));
  BOOST_TEST(tr.intervals.size() == std::size_t{thread_count} * groups * (1 + inner_per_group));
  std::vector<std::vector<const cpu_interval*>> by_thread(tr.threads.size());
  for (const cpu_interval& i : tr.intervals) by_thread.at(i.thread).push_back(&i);
  const name_id outer_id = tr.strings.find("outer");
  BOOST_REQUIRE(outer_id != string_table::npos);
  for (int t = 0; t < thread_count; ++t) {
    const std::vector<const cpu_interval*>& mine = by_thread[thread_of(tr, tids[t])];
    BOOST_REQUIRE_EQUAL(mine.size(), std::size_t{groups} * (1 + inner_per_group));
    name_id inner_ids[3];
    for (int k = 0; k < 3; ++k) {
      inner_ids[k] = tr.strings.find("inner_" + std::to_string(t) + "_" + std::to_string(k));
      BOOST_REQUIRE(inner_ids[k] != string_table::npos);
    }
    // Input order is push order: each outer range, then its 9 inner ranges, in time order, inside it.
    std::int64_t previous_outer_end = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < mine.size(); i += 1 + inner_per_group) {
      const cpu_interval& o = *mine[i];
      if (o.name != outer_id || domain_of(tr, o) != "capture_test" || o.start_ns < previous_outer_end ||
          o.start_ns > o.end_ns) {
        ++bad;
      }
      previous_outer_end = o.end_ns;
      std::int64_t previous_inner_end = o.start_ns;
      for (int j = 0; j < inner_per_group; ++j) {
        const cpu_interval& in = *mine[i + 1 + j];
        if (in.name != inner_ids[j % 3] || in.domain != 0 || in.start_ns < previous_inner_end ||
            in.start_ns > in.end_ns || in.end_ns > o.end_ns) {
          ++bad;
        }
        previous_inner_end = in.end_ns;
      }
    }
    BOOST_TEST(bad == 0u, "thread " << t << ": " << bad << " ranges with a wrong name, domain or nesting");
  }
}

BOOST_AUTO_TEST_CASE(start_and_end_on_different_threads) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("async");
  const nvtxEventAttributes_t load = ascii("load");
  capture_session session;
  const std::int64_t starter_tid = this_tid();
  const nvtxRangeId_t a = nvtxRangeStartA("request_a");
  const nvtxRangeId_t b = nvtxDomainRangeStartEx(domain, &load);
  const nvtxRangeId_t c = nvtxRangeStartW(L"request_c");
  std::int64_t ender_tid = 0;
  std::thread ender([&] {
    ender_tid = this_tid();
    nvtxRangeEnd(a);
    nvtxDomainRangeEnd(domain, b);
  });
  ender.join();
  nvtxRangeEnd(c);  // started and ended here
  capture_result result = session.stop();
  const trace& t = result.data;

  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(ender_tid != starter_tid);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 3u);
  const thread_index starter = thread_of(t, starter_tid);
  std::map<std::string, cpu_interval> by_name;
  for (const cpu_interval& i : t.intervals) by_name[std::string(name_of(t, i))] = i;
  for (const char* name : {"request_a", "load", "request_c"}) {
    BOOST_TEST(by_name.count(name) == 1u, name);
    BOOST_TEST(by_name[name].thread == starter, name << " lives on the thread that started it");
    BOOST_TEST(by_name[name].start_ns <= by_name[name].end_ns);
  }
  BOOST_TEST(domain_of(t, by_name["load"]) == "async");
  BOOST_TEST(by_name["request_a"].domain == 0);
  // The ender thread recorded only ends: it owns no interval, but it is a thread of the trace.
  BOOST_TEST(intervals_on(t, thread_of(t, ender_tid)).empty());
}

// Domain ids are 16 bits (docs/capture.md): once the process has 65,535 named domains, every domain
// created after them shares the last id, 0xFFFF (a handle is its id), and each such creation is counted
// and reported (DROPPED_HOST_RECORDS: those records lose their own domain) by every later session. The
// registry lives as long as the process, so the case runs in a child process of this test program: the
// other cases keep their domains whatever the order.
BOOST_AUTO_TEST_CASE(domains_past_the_limit_share_the_last_id_and_are_warned) {
  if (std::getenv("REGIONPROF_DOMAIN_LIMIT_CHILD") == nullptr) {
    const regionprof::test::child_result child = regionprof::test::run_child(
        {std::filesystem::read_symlink("/proc/self/exe").string(),
         "--run_test=capture/domains_past_the_limit_share_the_last_id_and_are_warned"},
        {.env = {"REGIONPROF_DOMAIN_LIMIT_CHILD=1"}, .stderr_to_stdout = true});
    BOOST_TEST(child.status == 0, child.out);
    BOOST_TEST(child.out.find("No errors detected") != std::string::npos, child.out);
    return;
  }
  auto id_of = [](nvtxDomainHandle_t handle) { return reinterpret_cast<std::uintptr_t>(handle); };
  const nvtxDomainHandle_t kept = nvtxDomainCreateA("kept_domain");
  const nvtxEventAttributes_t in_kept = ascii("in_kept");
  const nvtxEventAttributes_t in_shared = ascii("in_shared");
  {
    capture_session before;
    nvtxDomainRangePushEx(kept, &in_kept);
    nvtxDomainRangePop(kept);
    const capture_result result = before.stop();
    BOOST_TEST(result.stats.domains_past_limit == 0u);
    BOOST_TEST(!has_warning(result.data, warning_code::dropped_host_records));
  }
  // Named domains up to the last id; the name that gets it is the one the later domains share.
  std::string last_name;
  for (int i = 0; last_name.empty(); ++i) {
    const std::string name = "domain_" + std::to_string(i);
    const std::uintptr_t id = id_of(nvtxDomainCreateA(name.c_str()));
    BOOST_REQUIRE(id != 0u && id <= 0xFFFFu);
    if (id == 0xFFFFu) last_name = name;
  }
  const nvtxDomainHandle_t past_1 = nvtxDomainCreateA("past_the_limit_1");
  const nvtxDomainHandle_t past_2 = nvtxDomainCreateW(L"past_the_limit_2");
  BOOST_TEST(id_of(past_1) == 0xFFFFu);
  BOOST_TEST(id_of(past_2) == 0xFFFFu);
  BOOST_TEST(id_of(nvtxDomainCreateA("kept_domain")) == id_of(kept), "a known name keeps its id");

  capture_session session;
  nvtxDomainRangePushEx(kept, &in_kept);
  nvtxDomainRangePop(kept);
  nvtxDomainRangePushEx(past_1, &in_shared);
  nvtxDomainRangePop(past_1);
  const capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_TEST(result.stats.domains_past_limit == 2u);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 2u);
  BOOST_TEST(name_of(t, t.intervals[0]) == "in_kept");
  BOOST_TEST(domain_of(t, t.intervals[0]) == "kept_domain");
  BOOST_TEST(name_of(t, t.intervals[1]) == "in_shared");
  BOOST_TEST(domain_of(t, t.intervals[1]) == last_name, "recorded in the last domain before the limit");
  BOOST_TEST(count_warnings(t, warning_code::dropped_host_records) == 1u);
  const std::string message = warning_text(t, warning_code::dropped_host_records);
  BOOST_TEST(message.starts_with("2 NVTX domain(s) were created past the capture's limit of 65,535"), message);
  const warning* w = find_warning(t, warning_code::dropped_host_records);
  BOOST_REQUIRE(w != nullptr);
  BOOST_TEST((w->source == warning_source::nvtx));
}

BOOST_AUTO_TEST_CASE(unbalanced_pops_and_open_ranges_are_counted) {
  nvtxRangePushA("opened_before_the_session");
  const nvtxRangeId_t early = nvtxRangeStartA("started_before_the_session");
  capture_session session;
  nvtxRangePop();  // closes the push made before the session: unmatched in the session
  nvtxRangeEnd(early);  // unmatched end
  nvtxRangePushA("balanced");
  nvtxRangePop();
  nvtxRangePop();  // one pop too many
  nvtxRangePushA("left_open_1");
  nvtxRangePushA("left_open_2");
  const nvtxRangeId_t never_ended = nvtxRangeStartA("never_ended");
  (void)never_ended;
  const nvtxRangeId_t twice = nvtxRangeStartA("ended_twice");
  nvtxRangeEnd(twice);
  nvtxRangeEnd(twice);
  capture_result result = session.stop();
  nvtxRangePop();
  nvtxRangePop();

  const trace& t = result.data;
  BOOST_TEST(result.stats.unmatched_pops == 2u);
  BOOST_TEST(result.stats.unmatched_ends == 2u);
  BOOST_TEST(result.stats.open_at_stop == 3u);
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 2u);
  BOOST_TEST(name_of(t, t.intervals[0]) == "balanced");
  BOOST_TEST(name_of(t, t.intervals[1]) == "ended_twice");
  BOOST_REQUIRE(has_warning(t, warning_code::unbalanced_ranges));
  const std::string message = warning_text(t, warning_code::unbalanced_ranges);
  BOOST_TEST(message.find("2 pop(s)") != std::string::npos, message);
  BOOST_TEST(message.find("2 range end(s)") != std::string::npos, message);
  BOOST_TEST(message.find("3 range(s) were still open") != std::string::npos, message);
  BOOST_TEST(message.find("'left_open_1' 'left_open_2' 'never_ended'") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(names_from_a_reused_buffer_are_interned_by_content) {
  char buffer[32];
  capture_session session;
  for (int i = 0; i < 300; ++i) {  // more names than the thread-local cache has slots
    std::snprintf(buffer, sizeof(buffer), "step_%d", i % 100);
    nvtxRangePushA(buffer);
    std::snprintf(buffer, sizeof(buffer), "scribbled_over_%d", i);  // the caller reuses its buffer at once
    nvtxRangePop();
  }
  const std::string copy = "step_7";  // same content from another address: the same name
  nvtxRangePushA(copy.c_str());
  nvtxRangePop();
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 301u);
  std::map<std::string, int> counts;
  std::map<std::string, name_id> ids;
  for (std::size_t i = 0; i < 300; ++i) {
    const std::string expected = "step_" + std::to_string(i % 100);
    BOOST_TEST(name_of(t, t.intervals[i]) == expected);
    ++counts[expected];
    ids[expected] = t.intervals[i].name;
  }
  BOOST_TEST(counts.size() == 100u);
  BOOST_TEST(t.intervals[300].name == ids["step_7"]);
  for (std::size_t i = 0; i < t.strings.size(); ++i) {
    BOOST_TEST(t.strings.view(static_cast<name_id>(i)).find("scribbled") == std::string_view::npos);
  }
}

BOOST_AUTO_TEST_CASE(non_ascii_names_through_a_and_w) {
  const char* utf8 = "na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80";  // "naïve 日本 🚀"
  const wchar_t* wide_name = L"na\u00EFve \u65E5\u672C \U0001F680";
  const nvtxDomainHandle_t domain = nvtxDomainCreateW(L"dom\u00E4ne");
  const nvtxStringHandle_t registered_wide = nvtxDomainRegisterStringW(domain, L"\u00FCber");
  const nvtxEventAttributes_t from_registered = registered(registered_wide);
  const nvtxEventAttributes_t from_unicode = wide(wide_name);
  capture_session session;
  nvtxRangePushA(utf8);
  nvtxRangePop();
  nvtxRangePushW(wide_name);
  nvtxRangePop();
  nvtxDomainRangePushEx(domain, &from_unicode);
  nvtxDomainRangePop(domain);
  nvtxDomainRangePushEx(domain, &from_registered);
  nvtxDomainRangePop(domain);
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 4u);
  for (int i = 0; i < 3; ++i) BOOST_TEST(name_of(t, t.intervals[i]) == utf8);
  BOOST_TEST(t.intervals[0].name == t.intervals[1].name);
  BOOST_TEST(name_of(t, t.intervals[3]) == "\xC3\xBC" "ber");
  BOOST_TEST(domain_of(t, t.intervals[2]) == "dom\xC3\xA4ne");
  BOOST_TEST(domain_of(t, t.intervals[3]) == "dom\xC3\xA4ne");
}

// A pop closes the innermost open push of its own domain on its thread, not the innermost push overall.
BOOST_AUTO_TEST_CASE(pop_closes_the_innermost_push_of_its_domain) {
  const nvtxDomainHandle_t x = nvtxDomainCreateA("x");
  const nvtxDomainHandle_t y = nvtxDomainCreateA("y");
  const nvtxEventAttributes_t x1 = ascii("x1");
  const nvtxEventAttributes_t x2 = ascii("x2");
  const nvtxEventAttributes_t y1 = ascii("y1");
  capture_session session;
  nvtxDomainRangePushEx(x, &x1);
  nvtxDomainRangePushEx(y, &y1);
  nvtxDomainRangePushEx(x, &x2);
  nvtxDomainRangePop(x);  // closes x2
  nvtxDomainRangePop(x);  // closes x1, although y1 (pushed after it) is still open
  nvtxDomainRangePop(y);  // closes y1
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_TEST(t.warnings.empty());
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 3u);
  // Input order is push order.
  BOOST_TEST(name_of(t, t.intervals[0]) == "x1");
  BOOST_TEST(name_of(t, t.intervals[1]) == "y1");
  BOOST_TEST(name_of(t, t.intervals[2]) == "x2");
  BOOST_TEST(domain_of(t, t.intervals[0]) == "x");
  BOOST_TEST(domain_of(t, t.intervals[1]) == "y");
  BOOST_TEST(t.intervals[0].end_ns <= t.intervals[1].end_ns, "x1 ended before y1");
  BOOST_TEST(t.intervals[2].end_ns <= t.intervals[0].end_ns, "x2 ended before x1");
}

BOOST_AUTO_TEST_CASE(marks_are_kept_beside_the_trace) {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("marks");
  const nvtxEventAttributes_t checkpoint = ascii("checkpoint");
  capture_session session;
  const std::int64_t before = monotonic_now_ns();
  nvtxMarkA("plain mark");
  nvtxDomainMarkEx(domain, &checkpoint);
  nvtxMarkW(L"wide mark");
  const std::int64_t after = monotonic_now_ns();
  capture_result result = session.stop();
  BOOST_TEST(result.data.intervals.empty(), "marks are not intervals");
  BOOST_REQUIRE_EQUAL(result.marks.size(), 3u);
  BOOST_TEST(result.stats.marks == 3u);
  const trace& t = result.data;
  BOOST_TEST(t.strings.view(result.marks[0].name) == "plain mark");
  BOOST_TEST(t.strings.view(result.marks[1].name) == "checkpoint");
  BOOST_TEST(t.strings.view(t.domains.at(result.marks[1].domain)) == "marks");
  BOOST_TEST(t.strings.view(result.marks[2].name) == "wide mark");
  for (const nvtx_mark& m : result.marks) {
    BOOST_TEST(m.time_ns >= before - 1000);
    BOOST_TEST(m.time_ns <= after + 1000);
  }
}

/// A mark `name` in `domain` with a payload (rule 18's work marks when `name` is regionprof.work.*).
static void payload_mark(nvtxDomainHandle_t domain, const char* name, nvtxPayloadType_t type, double value) {
  nvtxEventAttributes_t attributes = ascii(name);
  attributes.payloadType = type;
  if (type == NVTX_PAYLOAD_TYPE_DOUBLE) attributes.payload.dValue = value;
  if (type == NVTX_PAYLOAD_TYPE_INT64) attributes.payload.llValue = static_cast<std::int64_t>(value);
  if (type == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64) attributes.payload.ullValue = static_cast<std::uint64_t>(value);
  nvtxDomainMarkEx(domain, &attributes);
}

// Rule 18: work marks belong to the innermost push range of their domain open on their thread, sum per
// range, keep no time and are not marks; a work mark without such a range is counted in unattached_work;
// one with a negative or no payload is a plain mark.
BOOST_AUTO_TEST_CASE(work_marks_declare_work_for_the_innermost_range_of_their_domain) {
  static const registered_region copy{"region", "copy"};
  static const registered_region inner{"region", "inner"};
  const nvtxDomainHandle_t other = nvtxDomainCreateA("other");
  const nvtxDomainHandle_t ours = nvtxDomainCreateA("regionprof");
  const nvtxEventAttributes_t outer_other = ascii("outer_other");
  capture_session session;
  {
    scoped_region scope{copy, {.bytes = std::uint64_t{1} << 40, .flops = 6}};  // bytes past 2^32: the 64-bit value is kept
    nvtxDomainRangePushEx(other, &outer_other);
    payload_mark(other, "regionprof.work.items", NVTX_PAYLOAD_TYPE_DOUBLE, 2.6);  // to outer_other: 3 (rounded)
    declare_work({.bytes = 5});  // domain regionprof: to copy, not to outer_other
    nvtxDomainRangePop(other);
    {
      scoped_region nested{inner, {.items = 4}};
    }
    payload_mark(ours, "regionprof.work.flops", NVTX_PAYLOAD_TYPE_INT64, -1);  // negative: a plain mark
    payload_mark(ours, "regionprof.work.flops", NVTX_PAYLOAD_TYPE_UNSIGNED_INT64, 1);  // copy's flops: 6 + 1
  }
  declare_work({.bytes = 9});  // no range open: unattached
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_TEST(result.stats.unattached_work == 1u);
  BOOST_REQUIRE_EQUAL(t.warnings.size(), 1u);  // never silent
  BOOST_TEST((t.warnings[0].code == warning_code::unattached_work));
  BOOST_TEST(t.warnings[0].message.starts_with("1 work declaration(s) (regionprof.work.* marks) had no push range"));
  BOOST_REQUIRE_EQUAL(result.marks.size(), 1u);  // only the negative one is a mark
  BOOST_TEST(t.strings.view(result.marks[0].name) == "regionprof.work.flops");
  std::map<std::string, declared_work> by_name;
  for (const interval_work& w : t.declared_work) {
    BOOST_REQUIRE_LT(w.interval, t.intervals.size());
    by_name[std::string(name_of(t, t.intervals[w.interval]))] = w.work;
  }
  BOOST_REQUIRE_EQUAL(by_name.size(), 3u);
  BOOST_TEST((by_name["region:copy"] == declared_work{.bytes = (std::uint64_t{1} << 40) + 5, .flops = 7}));
  BOOST_TEST((by_name["outer_other"] == declared_work{.items = 3}));
  BOOST_TEST((by_name["region:inner"] == declared_work{.items = 4}));
}

// One thread, a cap of two chunks: exactly 2 x records_per_chunk records are kept, every other one is
// counted.
BOOST_AUTO_TEST_CASE(memory_cap_drops_and_counts_exactly) {
  constexpr std::uint64_t per_chunk = capture_detail::records_per_chunk;
  constexpr auto ranges = static_cast<int>(2 * per_chunk + 123);  // 2 records each: twice the cap, and more
  capture_options options;
  options.memory_cap_bytes = 2 * capture_detail::chunk_bytes;
  capture_session session(options);
  for (int i = 0; i < ranges; ++i) {
    nvtxRangePushA("capped");
    nvtxRangePop();
  }
  capture_result result = session.stop();
  BOOST_TEST(result.stats.records == 2 * per_chunk);
  BOOST_TEST(result.stats.dropped_records == 2u * ranges - 2 * per_chunk);
  BOOST_TEST(result.stats.chunk_bytes == 2 * capture_detail::chunk_bytes);
  BOOST_TEST(result.data.intervals.size() == per_chunk);  // 2 x per_chunk records: per_chunk complete ranges
  BOOST_TEST(result.stats.lost_to_cap == 0u);
  const std::string message = warning_text(result.data, warning_code::dropped_host_records);
  BOOST_TEST(message.find(std::to_string(2u * ranges - 2 * per_chunk) + " NVTX record(s) were dropped") !=
                 std::string::npos,
             message);
  BOOST_TEST(!has_warning(result.data, warning_code::unbalanced_ranges));
}

// Several threads against a cap of three chunks: whoever gets the chunks, kept + dropped = emitted, and
// a range whose pop was dropped is counted as lost, not as unbalanced.
BOOST_AUTO_TEST_CASE(memory_cap_with_threads_accounts_for_every_record) {
  constexpr int thread_count = 4;
  // 2.5 chunks of records each: every thread wants 3 chunks, and 3 full chunks hold one thread's records.
  constexpr auto ranges = static_cast<int>(capture_detail::records_per_chunk * 5 / 4);
  capture_options options;
  options.memory_cap_bytes = 3 * capture_detail::chunk_bytes + 100;
  capture_session session(options);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < ranges; ++i) {
        nvtxRangePushA("capped");
        nvtxRangePop();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  capture_result result = session.stop();
  BOOST_TEST(result.stats.records + result.stats.dropped_records == 2u * thread_count * ranges);
  BOOST_TEST(result.stats.records <= 3u * capture_detail::records_per_chunk);
  BOOST_TEST(result.stats.records >= 2u * ranges);  // the demand exceeds the cap: every chunk was used
  BOOST_TEST(result.stats.chunk_bytes == 3 * capture_detail::chunk_bytes);
  // Each thread kept a prefix of push, pop, push, ...: a prefix ending on a push lost that range.
  BOOST_TEST(2 * result.data.intervals.size() + result.stats.lost_to_cap == result.stats.records);
  BOOST_TEST(has_warning(result.data, warning_code::dropped_host_records));
  BOOST_TEST(!has_warning(result.data, warning_code::unbalanced_ranges));
}

BOOST_AUTO_TEST_CASE(a_second_session_is_refused) {
  BOOST_TEST(!capture_session_active());
  capture_session first;
  BOOST_TEST(capture_session_active());
  BOOST_CHECK_EXCEPTION(capture_session second, std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("already active") != std::string::npos;
  });
  capture_result result = first.stop();
  BOOST_TEST(!capture_session_active());
  BOOST_CHECK_THROW(first.stop(), std::logic_error);
  capture_session third;  // allowed once the first one stopped
}

// A claim holds the session without recording: sessions and other claims are refused while it is held,
// the range it spans is not recorded, and the session started on it records from its start. A claim
// destroyed untaken gives the session back; one taken (or moved from) starts no second session.
BOOST_AUTO_TEST_CASE(a_claim_holds_the_session_before_it_records) {
  {
    capture_claim unused;
    BOOST_TEST(capture_session_active());
  }
  BOOST_TEST(!capture_session_active());
  capture_claim claim;
  BOOST_CHECK_THROW(capture_session refused, std::logic_error);
  BOOST_CHECK_EXCEPTION(capture_claim second, std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("already active") != std::string::npos;
  });
  nvtxRangePushA("claimed");
  nvtxRangePop();
  capture_claim moved(std::move(claim));
  BOOST_CHECK_THROW(capture_session from_empty(std::move(claim)), std::logic_error);
  capture_session session(std::move(moved));
  BOOST_CHECK_THROW(capture_session again(std::move(moved)), std::logic_error);
  nvtxRangePushA("recorded");
  nvtxRangePop();
  capture_result result = session.stop();
  BOOST_TEST(!capture_session_active());
  BOOST_REQUIRE_EQUAL(result.data.intervals.size(), 1u);
  BOOST_TEST(name_of(result.data, result.data.intervals[0]) == "recorded");
  BOOST_TEST(result.data.warnings.empty());
}

BOOST_AUTO_TEST_CASE(timestamps_are_on_the_monotonic_clock) {
  capture_session session;
  const std::int64_t before = monotonic_now_ns();
  nvtxRangePushA("timed");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  nvtxRangePop();
  const std::int64_t after = monotonic_now_ns();
  capture_result result = session.stop();
  BOOST_REQUIRE_EQUAL(result.data.intervals.size(), 1u);
  const cpu_interval& i = result.data.intervals[0];
  // Calibration error is tens of ns; a wrong mapping is off by seconds.
  BOOST_TEST(i.start_ns >= before - 1000);
  BOOST_TEST(i.end_ns <= after + 1000);
  BOOST_TEST(i.end_ns - i.start_ns >= 20'000'000);
  BOOST_TEST(result.stats.clock_is_tsc == capture_detail::clock_is_tsc);
}

BOOST_AUTO_TEST_CASE(nothing_is_recorded_outside_a_session) {
  nvtxRangePushA("before");
  nvtxRangePop();
  {
    capture_session first;
    nvtxRangePushA("first");
    nvtxRangePop();
    nvtxRangePushA("first_left_open");
    // discarded: no stop()
  }
  nvtxRangePop();
  nvtxRangePushA("between");
  nvtxRangePop();
  capture_session second;
  nvtxRangePushA("second");
  nvtxRangePop();
  capture_result result = second.stop();
  nvtxRangePushA("after");
  nvtxRangePop();
  BOOST_REQUIRE_EQUAL(result.data.intervals.size(), 1u);
  BOOST_TEST(name_of(result.data, result.data.intervals[0]) == "second");
  BOOST_TEST(result.data.warnings.empty());
}

BOOST_AUTO_TEST_CASE(thread_names_from_the_os_and_from_nvtx) {
  capture_session session;
  std::int64_t os_named = 0;
  std::int64_t nvtx_named = 0;
  std::thread a([&] {
    os_named = this_tid();
    pthread_setname_np(pthread_self(), "loader");
    nvtxRangePushA("work");
    nvtxRangePop();
  });
  a.join();
  std::thread b([&] {
    nvtx_named = this_tid();
    nvtxNameOsThreadA(static_cast<std::uint32_t>(nvtx_named), "nvtx worker");
    nvtxRangePushA("work");
    nvtxRangePop();
  });
  b.join();
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_TEST(t.strings.view(t.threads[thread_of(t, os_named)].name) == "loader");
  BOOST_TEST(t.strings.view(t.threads[thread_of(t, nvtx_named)].name) == "nvtx worker");
  BOOST_TEST(t.threads[thread_of(t, os_named)].pid == static_cast<std::int64_t>(::getpid()));
}

// The emit API's ranges (domain `regionprof`, registered names) and the C API, as the analysis sees them.
BOOST_AUTO_TEST_CASE(emit_api_ranges_are_captured) {
  const registered_region encoder{region_kind::aot_module, "encoder"};
  const regionprof_region_handle layer = regionprof_region_register("layer", "0");
  capture_session session;
  {
    scoped_run run;
    scoped_region r{encoder};
    regionprof_region_push(layer);
    regionprof_region_push_name("untuned_module", "blocks.1");
    regionprof_region_pop();
    regionprof_region_pop();
  }
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 4u);
  BOOST_TEST(name_of(t, t.intervals[0]) == "regionprof.profiled_run");
  BOOST_TEST(name_of(t, t.intervals[1]) == "aot_module:encoder");
  BOOST_TEST(name_of(t, t.intervals[2]) == "layer:0");
  BOOST_TEST(name_of(t, t.intervals[3]) == "untuned_module:blocks.1");
  for (const cpu_interval& i : t.intervals) BOOST_TEST(domain_of(t, i) == "regionprof");
  for (std::size_t i = 1; i < 4; ++i) {
    BOOST_TEST(t.intervals[i - 1].start_ns <= t.intervals[i].start_ns);
    BOOST_TEST(t.intervals[i].end_ns <= t.intervals[i - 1].end_ns);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// torch's op ranges (nvtxRangePushA "<op>, seq = N, op_id = M", a new name per call) are recorded under
// the op's name, found in the thread's name cache: three calls add one name, not three.
BOOST_AUTO_TEST_CASE(torchs_per_call_suffix_is_cut_as_ranges_are_recorded) {
  capture_session session;
  nvtxRangePushA("aten::mm, seq = 4, op_id = 87");
  nvtxRangePop();
  nvtxRangePushA("aten::mm, seq = 9, op_id = 120");
  nvtxRangePop();
  const nvtxRangeId_t id = nvtxRangeStartA("aten::mm, op_id = 121");
  nvtxRangeEnd(id);
  nvtxRangePushA("plain, name");
  nvtxRangePop();
  capture_result result = session.stop();
  const trace& t = result.data;
  BOOST_REQUIRE_EQUAL(t.intervals.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(name_of(t, t.intervals[i]) == "aten::mm");
  BOOST_TEST(name_of(t, t.intervals[3]) == "plain, name");
  BOOST_TEST(t.strings.find("aten::mm, seq = 4, op_id = 87") == string_table::npos);  // never interned
}
