// A program with the static capture tool that forks while its threads record, run by test_capture_stress.
//
// While a session is active, 4 threads record up to 2 M ranges (200000 under a sanitizer) with 4096
// unregistered names each (more than the per-thread name cache holds, so they take the tool's string
// registry lock all the time) and 2 more threads start up to 2000 short-lived threads each (the thread
// registry lock; not under a sanitizer); meanwhile the main thread forks 16 children. Each child records
// 1000 `child_range` ranges (and 1000 more on a thread of its own, except under ThreadSanitizer, which
// supports no new thread after a multithreaded fork), stops its copy of the session, checks that it holds
// exactly its own 2000 (or 1000) `child_range` ranges, and exits 0 (1 on a mismatch; a child stuck on a
// lock held at the fork by a thread it does not have is killed by its alarm). The parent then stops its
// session and checks its own ranges exactly.
//
// Prints `children_ok=N parent_ranges=N expected=N child_ranges_in_parent=N` (and to stderr each failed
// child's wait status and the parent's warnings); returns 0 when all agree.
#include <sys/wait.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "regionprof/capture/capture.hpp"

namespace {

std::size_t count_named(const regionprof::capture_result& result, std::string_view name) {
  std::size_t n = 0;
  for (const regionprof::cpu_interval& i : result.data.intervals) n += result.data.strings.view(i.name) == name;
  return n;
}

constexpr int child_ranges_per_thread = 1000;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitizer = true;
#else
constexpr bool sanitizer = false;
#endif
constexpr long name_ranges = sanitizer ? 200'000 : 2'000'000;  // per recording thread

[[noreturn]] void child(regionprof::capture_session& session) {
  ::alarm(60);
  auto record = [] {
    for (int i = 0; i < child_ranges_per_thread; ++i) {
      nvtxRangePushA("child_range");
      nvtxRangePop();
    }
  };
  record();
  std::size_t expected = child_ranges_per_thread;
#if !defined(__SANITIZE_THREAD__)
  std::thread other(record);
  other.join();
  expected += child_ranges_per_thread;
#endif
  const regionprof::capture_result result = session.stop();
  const std::size_t got = count_named(result, "child_range");
  if (got != expected) std::fprintf(stderr, "child: %zu child_range ranges, expected %zu\n", got, expected);
  _exit(got == expected ? 0 : 1);
}

}  // namespace

int main() {
  nvtxInitialize(nullptr);  // before any thread: NVTX's lazy initialisation is unsynchronised
  constexpr int children = 16;
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> parent_ranges{0};
  regionprof::capture_session session;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        if (i >= name_ranges) {  // then idle until the end: a thread that exited unjoined is a leak to TSan
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        nvtxRangePushA(("parent_" + std::to_string(t) + "_" + std::to_string(i % 4096)).c_str());
        nvtxRangePop();
        parent_ranges.fetch_add(1, std::memory_order_relaxed);
        if (i % 64 == 63) std::this_thread::sleep_for(std::chrono::microseconds(20));  // bounded data
      }
    });
  }
  // Not under a sanitizer, whose runtime can deadlock a child forked while another thread is being
  // created or joined.
  for (int t = 0; t < (sanitizer ? 0 : 2); ++t) {
    threads.emplace_back([&] {
      for (int n = 0; n < 2000 && !stop.load(std::memory_order_relaxed); ++n) {
        std::thread([&] {
          nvtxRangePushA("short_lived");
          nvtxRangePop();
          parent_ranges.fetch_add(1, std::memory_order_relaxed);
        }).join();
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // each thread costs a chunk
      }
    });
  }
  while (parent_ranges.load() < 1000) std::this_thread::yield();
  int children_ok = 0;
  for (int c = 0; c < children; ++c) {
    const pid_t pid = ::fork();
    if (pid == 0) child(session);
    int status = 0;
    if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ++children_ok;
    } else {
      std::fprintf(stderr, "child %d: wait status %d\n", c, status);
    }
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  const regionprof::capture_result result = session.stop();
  const std::size_t child_in_parent = count_named(result, "child_range");
  for (const regionprof::warning& w : result.data.warnings) std::fprintf(stderr, "warning: %s\n", w.message.c_str());
  std::printf("children_ok=%d parent_ranges=%zu expected=%zu child_ranges_in_parent=%zu\n", children_ok,
              result.data.intervals.size(), parent_ranges.load(), child_in_parent);
  return children_ok == children && result.data.intervals.size() == parent_ranges.load() && child_in_parent == 0 &&
                 result.data.warnings.empty()
             ? 0
             : 1;
}
