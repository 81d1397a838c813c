// A program built WITHOUT regionprof's static tool (only NVTX's header), run by test_capture_stress under
// NVTX_INJECTION64_PATH (libregionprof_nvtx_inject.so or the CLI's libregionprof_inject.so) to see what
// each way of ending leaves. Every mode first records, on the main thread, a range `outer` that it never
// closes, holding STEPS ranges `step` (each holding one `layer`), while a worker thread records `worker_op`
// ranges until the process ends.
//
// Usage: stress_app exit STEPS     then calls exit(3) inside `outer`
//        stress_app signal STEPS   then prints `ready` and keeps recording `tail` ranges until killed
//        stress_app fork STEPS     then forks 4 children, each recording `child_step` ranges (and, but
//                                  under ThreadSanitizer, on a thread of its own) before exit(0); the
//                                  parent waits for them, prints `trace_exists=0|1` (whether the file in
//                                  REGIONPROF_NVTX_TRACE or REGIONPROF_OUTPUT exists yet), records STEPS
//                                  more `step` ranges, closes `outer` and returns 0
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer cannot scan the parent's threads, which a forked child lacks, and reports what only they
// referenced as leaked when the child exits: no leak check in the children.
bool forked_child = false;
extern "C" int __lsan_is_turned_off() { return forked_child ? 1 : 0; }
#endif

namespace {

std::atomic<bool> worker_stop{false};
std::atomic<long> worker_ranges{0};

void steps(int count) {
  for (int i = 0; i < count; ++i) {
    nvtxRangePushA("step");
    nvtxRangePushA("layer");
    nvtxRangePop();
    nvtxRangePop();
  }
}

void worker() {
  while (!worker_stop.load(std::memory_order_relaxed)) {
    nvtxRangePushA("worker_op");
    nvtxRangePop();
    worker_ranges.fetch_add(1, std::memory_order_relaxed);
  }
}

void wait_for_worker() {
  while (worker_ranges.load(std::memory_order_relaxed) < 1000) std::this_thread::yield();
}

bool output_exists() {
  const char* path = std::getenv("REGIONPROF_NVTX_TRACE");
  if (path == nullptr || *path == '\0') path = std::getenv("REGIONPROF_OUTPUT");
  struct stat info {};
  return path != nullptr && ::stat(path, &info) == 0;
}

int fork_children() {
  constexpr int children = 4;
  pid_t pids[children] = {};
  for (pid_t& pid : pids) {
    pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
#if defined(__SANITIZE_ADDRESS__)
      forked_child = true;
#endif
      ::alarm(60);  // a child stuck on a lock inherited from another thread dies and fails the test
      auto record = [] {
        for (int i = 0; i < 2000; ++i) {
          nvtxRangePushA(("child_step_" + std::to_string(i % 50)).c_str());
          nvtxRangePop();
        }
      };
      record();
#if !defined(__SANITIZE_THREAD__)  // TSan supports no new thread after a multithreaded fork
      std::thread child_thread(record);
      child_thread.join();
#endif
      std::exit(0);
    }
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: stress_app exit|signal|fork STEPS\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int count = std::atoi(argv[2]);
  nvtxRangePushA("outer");
  std::thread background(worker);
  wait_for_worker();
  steps(count);
  if (mode == "exit") std::exit(3);  // inside `outer`, the worker still recording
  if (mode == "signal") {
    std::puts("ready");
    std::fflush(stdout);
    for (;;) {
      nvtxRangePushA("tail");
      nvtxRangePop();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (mode == "fork") {
    const int failed = fork_children();
    std::printf("children_failed=%d trace_exists=%d\n", failed, output_exists() ? 1 : 0);
    steps(count);
    nvtxRangePop();
    worker_stop.store(true);
    background.join();
    return 0;
  }
  std::fprintf(stderr, "stress_app: unknown mode %s\n", mode.c_str());
  return 2;
}
