// capture_session::cut_window: a long session cut into windows at run-marker boundaries (docs/capture.md,
// "Windows"), with real NVTX calls through the static route.
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_state.hpp"
#include "support/warning_queries.hpp"

using namespace regionprof;
using regionprof::test::has_warning;

namespace {

bool is_step(std::string_view name, std::string_view) { return name == "step"; }

/// The intervals of `t` named `name`, in trace order.
std::vector<cpu_interval> named(const trace& t, std::string_view name) {
  std::vector<cpu_interval> out;
  for (const cpu_interval& i : t.intervals) {
    if (t.strings.view(i.name) == name) out.push_back(i);
  }
  return out;
}

/// One run: `step` holding `work`.
void run_once() {
  nvtxRangePushA("step");
  nvtxRangePushA("work");
  nvtxRangePop();
  nvtxRangePop();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(capture_windows)

// 7 runs in windows of 3: windows of 3, 3, then nothing more to cut (1 run), and stop() gives the last 1.
BOOST_AUTO_TEST_CASE(windows_of_n_runs_and_the_partial_rest_at_stop) {
  nvtxInitialize(nullptr);
  capture_session session;
  for (int i = 0; i < 7; ++i) run_once();
  std::vector<capture_result> windows;
  while (auto window = session.cut_window(3, is_step)) windows.push_back(std::move(*window));
  windows.push_back(session.stop());
  BOOST_REQUIRE_EQUAL(windows.size(), 3u);  // ceil(7 / 3)
  const std::size_t expected[] = {3, 3, 1};
  std::int64_t previous_end = 0;
  std::uint64_t records = 0;
  for (const capture_result& w : windows) records += w.stats.records;
  BOOST_TEST(records == 7u * 4u);  // each window counts the records read since the one before
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const trace& t = windows[w].data;
    const auto steps = named(t, "step");
    BOOST_TEST_CONTEXT("window " << w) {
      BOOST_TEST(steps.size() == expected[w]);
      BOOST_TEST(named(t, "work").size() == expected[w]);
      BOOST_TEST(t.intervals.size() == 2 * expected[w]);
      BOOST_TEST(!has_warning(t, warning_code::unbalanced_ranges));
      BOOST_REQUIRE(!steps.empty());
      BOOST_TEST(steps.front().start_ns >= previous_end);  // windows follow each other in time
      previous_end = steps.back().end_ns;
    }
  }
}

// A range that spans cuts goes to the window in which it closes, whole; a start/end range too.
BOOST_AUTO_TEST_CASE(ranges_open_at_a_cut_carry_over_to_the_window_they_close_in) {
  nvtxInitialize(nullptr);
  capture_session session;
  std::vector<capture_result> windows;
  const auto cut = [&] {
    if (auto window = session.cut_window(2, is_step)) windows.push_back(std::move(*window));
  };
  nvtxRangePushA("outer");  // open across every cut, closed after run 4
  nvtxRangeId_t across = 0;
  for (int run = 0; run < 5; ++run) {
    run_once();
    if (run == 1) across = nvtxRangeStartA("across");  // started after run 1, ended after run 2
    if (run == 2) std::thread([across] { nvtxRangeEnd(across); }).join();
    cut();
  }
  nvtxRangePop();
  windows.push_back(session.stop());
  BOOST_REQUIRE_EQUAL(windows.size(), 3u);  // runs 0-1, 2-3, 4
  BOOST_TEST(named(windows[0].data, "step").size() == 2u);
  BOOST_TEST(named(windows[1].data, "step").size() == 2u);
  BOOST_TEST(named(windows[2].data, "step").size() == 1u);
  // `across` started before the first cut (end of run 1) but was open then: it is in window 1, whole.
  BOOST_TEST(named(windows[0].data, "across").empty());
  const auto across_intervals = named(windows[1].data, "across");
  BOOST_REQUIRE_EQUAL(across_intervals.size(), 1u);
  BOOST_TEST(across_intervals.front().start_ns <= named(windows[1].data, "step").front().start_ns);
  BOOST_TEST(across_intervals.front().end_ns >= named(windows[1].data, "step").front().end_ns);
  // `outer` closes after the last run: in the last window, from before run 0 to after run 4.
  BOOST_TEST(named(windows[0].data, "outer").empty());
  BOOST_TEST(named(windows[1].data, "outer").empty());
  const auto outer = named(windows[2].data, "outer");
  BOOST_REQUIRE_EQUAL(outer.size(), 1u);
  BOOST_TEST(outer.front().start_ns <= named(windows[0].data, "step").front().start_ns);
  BOOST_TEST(outer.front().end_ns >= named(windows[2].data, "step").back().end_ns);
  for (const capture_result& w : windows) {
    BOOST_TEST(!has_warning(w.data, warning_code::unbalanced_ranges));
    BOOST_TEST(w.stats.unmatched_pops == 0u);
    BOOST_TEST(w.stats.unmatched_ends == 0u);
  }
}

// A run marker still open at a cut: nothing to cut until it closes; what is open at stop is counted there.
BOOST_AUTO_TEST_CASE(an_open_marker_is_never_cut) {
  nvtxInitialize(nullptr);
  capture_session session;
  run_once();
  nvtxRangePushA("step");
  BOOST_TEST(!session.cut_window(2, is_step).has_value());
  nvtxRangePop();
  const auto window = session.cut_window(2, is_step);
  BOOST_REQUIRE(window.has_value());
  BOOST_TEST(named(window->data, "step").size() == 2u);
  nvtxRangePushA("step");  // left open: the stop's window counts it
  const capture_result rest = session.stop();
  BOOST_TEST(rest.data.intervals.empty());
  BOOST_TEST(rest.stats.open_at_stop == 1u);
  BOOST_TEST(has_warning(rest.data, warning_code::unbalanced_ranges));
  nvtxRangePop();
}

// 12,000 runs (48,000 records: 9 chunks of 5458) in windows of 1000: 12 windows of exactly 1000 runs,
// and the chunks each window dropped leave the session's memory count.
BOOST_AUTO_TEST_CASE(windows_across_chunks_drop_their_chunks) {
  nvtxInitialize(nullptr);
  capture_session session;
  std::vector<std::size_t> runs;
  std::size_t most_bytes = 0;
  for (int i = 0; i < 12'000; ++i) {
    run_once();
    if (i % 500 == 499) {
      while (auto window = session.cut_window(1000, is_step)) {
        runs.push_back(named(window->data, "step").size());
        BOOST_TEST(named(window->data, "work").size() == 1000u);
      }
      most_bytes = std::max(most_bytes, session.chunk_bytes());
    }
  }
  const capture_result rest = session.stop();
  BOOST_TEST(rest.data.intervals.empty());
  BOOST_TEST(runs == std::vector<std::size_t>(12, 1000), boost::test_tools::per_element());
  // 1000 runs are 4000 records: at most the current chunk and the one before are kept between windows.
  BOOST_TEST(most_bytes <= 2 * capture_detail::chunk_bytes);
}

// Windows cut while 4 threads record (no lock on their side): every range is in exactly one window or
// in stop()'s rest, none lost, none twice, none unbalanced; the records of all windows sum to the
// session's. Each thread waits halfway until a window has been cut (at most 10 s), so that at least one
// cut falls while they record however fast the machine is; the cuts go on while they finish.
BOOST_AUTO_TEST_CASE(windows_cut_while_threads_record_lose_nothing) {
  nvtxInitialize(nullptr);
  constexpr int threads = 4;
  constexpr int runs_each = 5000;
  capture_session session;
  std::atomic<int> running{threads};
  std::atomic<bool> cut_once{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&running, &cut_once] {
      for (int i = 0; i < runs_each; ++i) {
        if (i == runs_each / 2) {
          while (!cut_once.load(std::memory_order_acquire)) std::this_thread::yield();
        }
        run_once();
      }
      running.fetch_sub(1);
    });
  }
  std::vector<capture_result> windows;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running.load() > 0) {
    if (auto window = session.cut_window(500, is_step)) windows.push_back(std::move(*window));
    if (!windows.empty() || std::chrono::steady_clock::now() > give_up) cut_once.store(true, std::memory_order_release);
  }
  for (std::thread& w : workers) w.join();
  windows.push_back(session.stop());
  BOOST_TEST(windows.size() > 1u);
  std::size_t steps = 0;
  std::size_t works = 0;
  std::uint64_t records = 0;
  for (const capture_result& w : windows) {
    steps += named(w.data, "step").size();
    works += named(w.data, "work").size();
    records += w.stats.records;
    BOOST_TEST(!has_warning(w.data, warning_code::unbalanced_ranges));
    BOOST_TEST(w.stats.unmatched_pops == 0u);
  }
  BOOST_TEST(steps == std::size_t{threads} * runs_each);
  BOOST_TEST(works == std::size_t{threads} * runs_each);
  BOOST_TEST(records == std::uint64_t{threads} * runs_each * 4);
}

BOOST_AUTO_TEST_SUITE_END()
