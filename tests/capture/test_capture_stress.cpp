// The capture under stress, in process: 64 threads x 1 M ranges (with sessions stopped and started while
// they record, and in one session exactly), threads that exit mid-run, the memory cap reached by many
// threads, names longer than a chunk. Counts are exact wherever the outcome is determined.
//
// Sizes: RelWithDebInfo runs the full sizes (64 threads x 1 M ranges). Under AddressSanitizer and
// ThreadSanitizer (several times slower, several times the memory) the per-thread counts are scaled
// down (stress_scale); the thread counts, the cap arithmetic and every exact check stay the same.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <latch>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"
#include "support/warning_queries.hpp"

using namespace regionprof;
using regionprof::test::has_warning;
using regionprof::test::warning_text;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int stress_scale = 50;  // sanitizer builds: 1/50 of the ranges per thread
#else
constexpr int stress_scale = 1;
#endif

constexpr int stress_threads = 64;
constexpr int million_ranges = 1'000'000 / stress_scale;

std::int64_t this_tid() { return static_cast<std::int64_t>(::syscall(SYS_gettid)); }

nvtxEventAttributes_t registered(nvtxStringHandle_t handle) { return detail::registered_attributes(handle); }

/// Trace thread index by OS tid.
std::map<std::int64_t, thread_index> threads_by_tid(const trace& t) {
  std::map<std::int64_t, thread_index> out;
  for (thread_index i = 0; i < t.threads.size(); ++i) out[t.threads[i].tid] = i;
  return out;
}

/// Per trace thread: interval count, and how many are out of order (start before the previous end), have a
/// negative length or another name than `name`.
struct thread_tally {
  std::size_t ranges = 0;
  std::size_t bad = 0;
  std::int64_t last_end = 0;
};

std::vector<thread_tally> tally(const trace& t, name_id name) {
  std::vector<thread_tally> out(t.threads.size());
  for (const cpu_interval& i : t.intervals) {
    thread_tally& x = out.at(i.thread);
    ++x.ranges;
    if (i.name != name || i.start_ns > i.end_ns || i.start_ns < x.last_end) ++x.bad;
    x.last_end = i.end_ns;
  }
  return out;
}

/// One slot per thread, on its own cache line: how many ranges the thread has closed so far.
struct alignas(64) progress_slot {
  std::atomic<std::uint64_t> closed{0};
};

/// What a recording thread saw of one session, by its own loads of the session epoch (the value the
/// callbacks load first: capture_detail::active_epoch), one just before each range's push and one just
/// after its pop. Its ranges whose two loads both read `epoch` are [first, first + inside): consecutive,
/// as a thread reads the epoch's values in their modification order. `straddling` ranges read it in
/// one of the two loads only (at most one at the session's start and one at its stop).
struct epoch_view {
  std::uint32_t epoch = 0;
  std::uint64_t first = 0;
  std::uint64_t inside = 0;
  std::uint64_t straddling = 0;
};

/// One recording thread's epoch_views, in epoch order; written by that thread only.
class epoch_views {
 public:
  /// Range `range` read `before` just before its push and `after` just after its pop.
  void note(std::uint64_t range, std::uint32_t before, std::uint32_t after) {
    if (before == after) {
      epoch_view& v = of(before, range);
      if (v.inside == 0) v.first = range;
      ++v.inside;
      return;
    }
    if (before != 0) ++of(before, range).straddling;
    if (after != 0) ++of(after, range).straddling;
  }
  /// The view of session `epoch`; nullptr when neither load of any range read it.
  const epoch_view* find(std::uint32_t epoch) const {
    const auto it = std::lower_bound(views_.begin(), views_.end(), epoch,
                                     [](const epoch_view& v, std::uint32_t e) { return v.epoch < e; });
    return it != views_.end() && it->epoch == epoch ? &*it : nullptr;
  }

 private:
  epoch_view& of(std::uint32_t epoch, std::uint64_t range) {
    if (views_.empty() || views_.back().epoch != epoch) views_.push_back({epoch, range, 0, 0});
    return views_.back();
  }
  std::vector<epoch_view> views_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_stress)

// 64 threads x 1 M push/pop pairs in one session, stopped once every thread is done: exactly 64 M ranges,
// each thread's in order. The cap is raised to fit them all (128 M records: 1.5 GB of chunks).
BOOST_AUTO_TEST_CASE(sixty_four_threads_a_million_ranges_each_exactly) {
  const nvtxStringHandle_t name = nvtxDomainRegisterStringA(nullptr, "stress_range");
  const nvtxEventAttributes_t attributes = registered(name);
  capture_options options;
  options.memory_cap_bytes = std::size_t{2} << 30;
  std::vector<std::int64_t> tids(stress_threads);
  std::vector<std::thread> threads;
  capture_session session(options);
  for (int t = 0; t < stress_threads; ++t) {
    threads.emplace_back([&, t] {
      tids[t] = this_tid();
      for (int i = 0; i < million_ranges; ++i) {
        nvtxRangePushEx(&attributes);
        nvtxRangePop();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const capture_result result = session.stop();
  const trace& tr = result.data;
  const std::uint64_t expected = std::uint64_t{stress_threads} * million_ranges;
  BOOST_TEST(tr.warnings.empty());
  BOOST_TEST(result.stats.dropped_records == 0u);
  BOOST_TEST(result.stats.records == 2 * expected);
  BOOST_TEST(tr.intervals.size() == expected);
  const name_id id = tr.strings.find("stress_range");
  BOOST_REQUIRE(id != string_table::npos);
  const std::vector<thread_tally> per_thread = tally(tr, id);
  const auto index = threads_by_tid(tr);
  for (int t = 0; t < stress_threads; ++t) {
    const thread_tally& x = per_thread.at(index.at(tids[t]));
    BOOST_TEST(x.ranges == std::size_t{million_ranges}, "thread " << t);
    BOOST_TEST(x.bad == 0u, "thread " << t);
  }
}

// 64 threads x 1 M push/pop pairs while the main thread keeps stopping and starting sessions: each stop()
// collects (drains) every thread's chunks while the threads write on.
//
// Which session a range belongs to is decided on its own thread: it is recorded in session E exactly when
// the loads of the session epoch in its push and in its pop both read E. Each thread brackets every range
// with two loads of its own (epoch_view); read-read coherence puts the callbacks' loads between them, so
// per session and thread, with no slack:
// - at least: the ranges whose two loads both read E and that the main thread saw closed (progress
//   counter) before stop() began. Their pops were published before the collection, so a chunk lost to a
//   collection that runs while its owner hands it over fails this.
// - at most: those whose two loads both read E plus the straddling ones (one load read E: a push before
//   the start or a pop after the stop may have read E), or one range when neither load ever read E (a
//   thread paused inside one range for a whole session).
// The main thread's own reading of a thread's progress right after the constructor is no bound: its
// store of the epoch and that load, and the thread's counter store and its next epoch load, may each
// complete out of order (store buffering, allowed for release/acquire and by x86), so a running thread
// can close ranges after that reading and before its loads read E; the test reports how many.
// Also: every range in order and well formed, and the records add up to the ranges, the ranges open at
// stop and the pops whose push came before the session.
BOOST_AUTO_TEST_CASE(sessions_stopped_and_started_while_sixty_four_threads_record) {
  const nvtxStringHandle_t name = nvtxDomainRegisterStringA(nullptr, "drained_range");
  const nvtxEventAttributes_t attributes = registered(name);
  std::vector<progress_slot> progress(stress_threads);
  std::vector<epoch_views> seen(stress_threads);
  std::vector<std::int64_t> tids(stress_threads);
  std::atomic<int> finished{0};
  std::latch started(stress_threads + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < stress_threads; ++t) {
    threads.emplace_back([&, t] {
      tids[t] = this_tid();
      // Lowest priority: on a machine with fewer cores than threads the collecting thread still runs at
      // once, so sessions follow each other closely and most ranges are recorded.
      ::setpriority(PRIO_PROCESS, static_cast<id_t>(tids[t]), 19);
      started.arrive_and_wait();
      for (int i = 0; i < million_ranges; ++i) {
        const std::uint32_t before = capture_detail::active_epoch.load(std::memory_order_relaxed);
        nvtxRangePushEx(&attributes);
        nvtxRangePop();
        const std::uint32_t after = capture_detail::active_epoch.load(std::memory_order_relaxed);
        if ((before | after) != 0) seen[t].note(static_cast<std::uint64_t>(i), before, after);
        progress[t].closed.store(static_cast<std::uint64_t>(i) + 1, std::memory_order_release);
      }
      finished.fetch_add(1);
    });
  }
  started.arrive_and_wait();
  struct session_counts {
    std::uint32_t epoch = 0;
    std::vector<std::uint64_t> at_start, at_stop;  // progress read right after the start, before stop()
    std::vector<std::size_t> recorded;
  };
  std::vector<session_counts> sessions;
  std::uint64_t total_ranges = 0;
  std::size_t bad = 0, unbalanced = 0;
  while (finished.load() < stress_threads || sessions.size() < 2) {
    session_counts& counts = sessions.emplace_back();
    counts.at_start.resize(stress_threads);
    counts.at_stop.resize(stress_threads);
    counts.recorded.resize(stress_threads);
    capture_session session;
    counts.epoch = capture_detail::active_epoch.load(std::memory_order_relaxed);  // this thread's own store
    for (int t = 0; t < stress_threads; ++t) counts.at_start[t] = progress[t].closed.load(std::memory_order_acquire);
    std::this_thread::sleep_for(std::chrono::milliseconds(sessions.size() % 4 == 1 ? 2 : 30));
    for (int t = 0; t < stress_threads; ++t) counts.at_stop[t] = progress[t].closed.load(std::memory_order_acquire);
    const capture_result result = session.stop();
    const trace& tr = result.data;
    BOOST_TEST(result.stats.dropped_records == 0u);
    BOOST_TEST(result.stats.records ==
               2 * tr.intervals.size() + result.stats.open_at_stop + result.stats.unmatched_pops);
    unbalanced += result.stats.unmatched_ends;
    total_ranges += tr.intervals.size();
    const std::vector<thread_tally> per_thread = tally(tr, tr.strings.find("drained_range"));
    const auto index = threads_by_tid(tr);
    for (int t = 0; t < stress_threads; ++t) {
      const auto found = index.find(tids[t]);
      if (found == index.end()) continue;
      counts.recorded[t] = per_thread[found->second].ranges;
      bad += per_thread[found->second].bad;
    }
  }
  for (std::thread& t : threads) t.join();  // every epoch_view complete and visible

  std::size_t lost = 0, extra = 0, late = 0;
  std::uint64_t latest = 0;  // ranges a thread closed after the main thread's reading, before reading E
  for (std::size_t s = 0; s < sessions.size(); ++s) {
    const session_counts& counts = sessions[s];
    for (int t = 0; t < stress_threads; ++t) {
      const epoch_view* view = seen[t].find(counts.epoch);
      const std::uint64_t inside = view != nullptr ? view->inside : 0;
      const std::uint64_t seen_closed =
          inside == 0 ? 0 : std::min(view->first + inside, std::max(counts.at_stop[t], view->first)) - view->first;
      const std::uint64_t at_most = view != nullptr ? inside + view->straddling : 1;
      const std::size_t recorded = counts.recorded[t];
      if (recorded < seen_closed) ++lost;
      if (recorded > at_most) ++extra;
      BOOST_TEST(recorded >= seen_closed, "session " << s << ", thread " << t << ": " << recorded
                                                     << " ranges recorded, " << seen_closed
                                                     << " closed inside it before stop()");
      BOOST_TEST(recorded <= at_most, "session " << s << ", thread " << t << ": " << recorded
                                                 << " ranges recorded, at most " << at_most << " inside it");
      if (inside > 0 && view->first > counts.at_start[t] + 1) {
        ++late;
        latest = std::max(latest, view->first - counts.at_start[t] - 1);
      }
    }
  }
  BOOST_TEST_MESSAGE(sessions.size() << " sessions collected " << total_ranges << " of "
                                     << std::uint64_t{stress_threads} * million_ranges << " ranges; in " << late
                                     << " thread-sessions the thread first read the epoch after closing more "
                                        "ranges than the one straddling the start since the main thread had "
                                        "read its progress (at most "
                                     << latest << " more)");
  BOOST_TEST(lost == 0u, "thread-sessions missing ranges closed inside the session");
  BOOST_TEST(extra == 0u, "thread-sessions holding ranges from outside the session");
  BOOST_TEST(bad == 0u, "ranges with a wrong name, order or length");
  BOOST_TEST(unbalanced == 0u);
  BOOST_TEST(total_ranges <= std::uint64_t{stress_threads} * million_ranges);
  BOOST_TEST(total_ranges > 0u);
}

// Threads exit all through a session, some while stop() collects: every exiting thread's current chunk is
// handed over at exit, so each thread's ranges are all there. Thread t records 1000 + 997 t ranges (so
// chunks end at every phase), thread 5 of each wave exactly one chunk's worth, thread 7 leaves a range
// open, thread 3 starts a range the main thread ends after the thread has gone.
BOOST_AUTO_TEST_CASE(threads_exiting_mid_run_hand_their_chunks_over) {
  constexpr int waves = 4;
  constexpr int per_wave = 16;
  const std::uint64_t per_chunk = capture_detail::records_per_chunk;
  auto ranges_of = [per_chunk](int t) -> int {
    return t % per_wave == 5 ? static_cast<int>(per_chunk / 2) : (1000 + 997 * t) / std::max(1, stress_scale / 10);
  };
  const nvtxStringHandle_t name = nvtxDomainRegisterStringA(nullptr, "exiting_range");
  const nvtxEventAttributes_t attributes = registered(name);
  std::vector<std::int64_t> tids(waves * per_wave);
  std::vector<nvtxRangeId_t> handoffs(waves * per_wave, 0);
  capture_session session;
  std::latch last_wave_recorded(per_wave);
  std::vector<std::thread> last_wave;
  for (int w = 0; w < waves; ++w) {
    std::vector<std::thread> wave;
    for (int k = 0; k < per_wave; ++k) {
      const int t = w * per_wave + k;
      auto body = [&, t, k, w] {
        tids[t] = this_tid();
        if (k == 3) handoffs[t] = nvtxRangeStartA("handoff");
        for (int i = 0; i < ranges_of(t); ++i) {
          nvtxRangePushEx(&attributes);
          nvtxRangePop();
        }
        if (k == 7) nvtxRangePushA("left_open");
        if (w == waves - 1) last_wave_recorded.count_down();  // then exits, racing stop()
      };
      (w == waves - 1 ? last_wave : wave).emplace_back(body);
    }
    for (std::thread& th : wave) th.join();  // this wave has exited before the next starts
  }
  for (int w = 0; w < waves - 1; ++w) nvtxRangeEnd(handoffs[w * per_wave + 3]);
  last_wave_recorded.wait();
  nvtxRangeEnd(handoffs[(waves - 1) * per_wave + 3]);
  const capture_result result = session.stop();  // the last wave exits meanwhile
  for (std::thread& th : last_wave) th.join();

  const trace& tr = result.data;
  std::uint64_t expected_ranges = 0;
  for (int t = 0; t < waves * per_wave; ++t) expected_ranges += ranges_of(t);
  BOOST_TEST(result.stats.dropped_records == 0u);
  BOOST_TEST(result.stats.open_at_stop == std::uint64_t{waves});
  BOOST_TEST(result.stats.unmatched_pops == 0u);
  BOOST_TEST(result.stats.unmatched_ends == 0u);
  BOOST_TEST(result.stats.records == 2 * expected_ranges + 2 * waves + waves);
  BOOST_TEST(tr.intervals.size() == expected_ranges + waves);
  BOOST_TEST(has_warning(tr, warning_code::unbalanced_ranges));
  BOOST_TEST(warning_text(tr, warning_code::unbalanced_ranges).find("'left_open'") != std::string::npos);
  const auto index = threads_by_tid(tr);
  std::vector<std::size_t> exiting(tr.threads.size()), handoff(tr.threads.size());
  for (const cpu_interval& i : tr.intervals) {
    const std::string_view n = tr.strings.view(i.name);
    if (n == "exiting_range") ++exiting.at(i.thread);
    if (n == "handoff") ++handoff.at(i.thread);
  }
  for (int t = 0; t < waves * per_wave; ++t) {
    const auto found = index.find(tids[t]);
    BOOST_REQUIRE_MESSAGE(found != index.end(), "thread " << t << " is missing");
    BOOST_TEST(exiting[found->second] == std::size_t(ranges_of(t)), "thread " << t);
    BOOST_TEST(handoff[found->second] == (t % per_wave == 3 ? 1u : 0u), "thread " << t);
  }
}

// 64 threads against a cap of 100 chunks, each wanting ~7: every thread emits outer push, a start, N
// push/pop pairs, the end, outer pop. Kept + dropped = emitted, exactly; each thread kept a prefix, so
// 2 x ranges + ranges lost to the cap = records kept; the warning quotes the exact counts.
BOOST_AUTO_TEST_CASE(memory_cap_reached_by_sixty_four_threads_drops_exactly_what_it_reports) {
  constexpr std::size_t cap_chunks = 100;
  const int inner = 20'000 / std::max(1, stress_scale / 10);
  const nvtxStringHandle_t outer_name = nvtxDomainRegisterStringA(nullptr, "capped_outer");
  const nvtxEventAttributes_t outer = registered(outer_name);
  capture_options options;
  options.memory_cap_bytes = cap_chunks * capture_detail::chunk_bytes + capture_detail::chunk_bytes / 2;
  std::atomic<std::uint64_t> emitted{0};
  std::vector<std::thread> threads;
  capture_session session(options);
  for (int t = 0; t < stress_threads; ++t) {
    threads.emplace_back([&] {
      std::uint64_t calls = 0;
      nvtxRangePushEx(&outer);
      const nvtxRangeId_t span = nvtxRangeStartA("capped_span");
      calls += 2;
      for (int i = 0; i < inner; ++i) {
        nvtxRangePushA("capped_inner");
        nvtxRangePop();
        calls += 2;
      }
      nvtxRangeEnd(span);
      nvtxRangePop();
      calls += 2;
      emitted.fetch_add(calls);
    });
  }
  for (std::thread& t : threads) t.join();
  const capture_result result = session.stop();
  const capture_stats& st = result.stats;
  BOOST_TEST(emitted.load() == std::uint64_t{stress_threads} * (2 * std::uint64_t(inner) + 4));
  if (stress_scale == 1) BOOST_TEST(emitted.load() > 2 * cap_chunks * capture_detail::records_per_chunk);
  BOOST_TEST(st.records + st.dropped_records == emitted.load());
  BOOST_TEST(st.chunk_bytes == cap_chunks * capture_detail::chunk_bytes);
  BOOST_TEST(st.records <= cap_chunks * capture_detail::records_per_chunk);
  BOOST_TEST(2 * result.data.intervals.size() + st.lost_to_cap == st.records);
  BOOST_TEST(st.unmatched_pops == 0u);
  BOOST_TEST(st.unmatched_ends == 0u);
  BOOST_TEST(st.open_at_stop == 0u);
  BOOST_TEST(!has_warning(result.data, warning_code::unbalanced_ranges));
  const std::string message = warning_text(result.data, warning_code::dropped_host_records);
  BOOST_TEST(message.find(std::to_string(st.dropped_records) + " NVTX record(s) were dropped") == 0u, message);
  BOOST_TEST(message.find("and " + std::to_string(st.lost_to_cap) + " range(s) lost their start or end") !=
                 std::string::npos,
             message);
}

// Names longer than a 64 KiB chunk, through every way NVTX passes a name: kept whole, byte for byte, and
// two that differ only in their last byte stay two names.
BOOST_AUTO_TEST_CASE(region_names_longer_than_64_kib_are_recorded_whole) {
  auto long_name = [](std::size_t length, char last) {
    std::string text(length, 'x');
    for (std::size_t i = 0; i < length; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
    text.back() = last;
    return text;
  };
  const std::string registered_text = long_name(65 * 1024 + 3, 'R');
  const std::string ascii_text = long_name(100'000, 'A');
  const std::string ascii_twin = long_name(100'000, 'B');
  const std::string ex_text = long_name(1 << 20, 'E');
  const std::string start_text = long_name(70'000, 'S');
  const std::string mark_text = long_name(80'000, 'M');
  const std::string emit_text = long_name(90'000, 'P');
  std::wstring wide_text(70'000, L'\u00e9');  // 2 UTF-8 bytes each: 140000 bytes
  wide_text.back() = L'W';
  const std::string wide_utf8 = [&] {
    std::string s;
    for (std::size_t i = 0; i + 1 < wide_text.size(); ++i) s += "\xc3\xa9";
    return s + "W";
  }();

  capture_session session;
  const nvtxStringHandle_t handle = nvtxDomainRegisterStringA(nullptr, registered_text.c_str());
  const nvtxEventAttributes_t reg = registered(handle);
  nvtxRangePushEx(&reg);
  nvtxRangePop();
  for (int i = 0; i < 2; ++i) {  // twice: the second time through the thread's name cache
    nvtxRangePushA(ascii_text.c_str());
    nvtxRangePop();
    nvtxRangePushA(ascii_twin.c_str());
    nvtxRangePop();
  }
  nvtxEventAttributes_t ex = registered(nullptr);
  ex.messageType = NVTX_MESSAGE_TYPE_ASCII;
  ex.message.ascii = ex_text.c_str();
  nvtxRangePushEx(&ex);
  nvtxRangePop();
  nvtxRangePushW(wide_text.c_str());
  nvtxRangePop();
  nvtxRangeEnd(nvtxRangeStartA(start_text.c_str()));
  nvtxMarkA(mark_text.c_str());
  regionprof_region_push_name("long", emit_text.c_str());
  regionprof_region_pop();
  const capture_result result = session.stop();
  const trace& tr = result.data;
  BOOST_TEST(tr.warnings.empty());
  std::map<std::string, int> seen;
  for (const cpu_interval& i : tr.intervals) ++seen[std::string(tr.strings.view(i.name))];
  BOOST_TEST(seen.size() == 7u);  // and one mark
  BOOST_TEST(seen[registered_text] == 1);
  BOOST_TEST(seen[ascii_text] == 2);
  BOOST_TEST(seen[ascii_twin] == 2);
  BOOST_TEST(seen[ex_text] == 1);
  BOOST_TEST(seen[wide_utf8] == 1);
  BOOST_TEST(seen[start_text] == 1);
  BOOST_TEST(seen["long:" + emit_text] == 1);
  BOOST_REQUIRE_EQUAL(result.marks.size(), 1u);
  BOOST_TEST(tr.strings.view(result.marks[0].name) == mark_text);
}

BOOST_AUTO_TEST_SUITE_END()
