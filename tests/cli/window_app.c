/* window_app RUNS [SLEEP_EVERY [t]]: RUNS runs, each a `step` range holding a `layer_0` range around a
 * little CPU work, for `regionprof run --window-runs` (tests/cli/test_run.cpp and the budget in
 * docs/benchmarks.md). With SLEEP_EVERY > 0 it sleeps 30 ms after every SLEEP_EVERY runs (outside any
 * run), so the library's window thread cuts windows while the program runs. With `t` it prints the
 * CLOCK_REALTIME seconds at the end of main to stderr (the exit-to-report time of docs/benchmarks.md).
 * Otherwise writes nothing; exits 0. */
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  const long runs = argc > 1 ? atol(argv[1]) : 10;
  const long sleep_every = argc > 2 ? atol(argv[2]) : 0;
  volatile unsigned sum = 0;
  for (long run = 0; run < runs; ++run) {
    nvtxRangePushA("step");
    nvtxRangePushA("layer_0");
    for (unsigned i = 0; i < 64; ++i) sum = sum + (i ^ (unsigned)run);
    nvtxRangePop();
    nvtxRangePop();
    if (sleep_every > 0 && run % sleep_every == sleep_every - 1) {
      const struct timespec pause = {0, 30 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  if (argc > 3 && strcmp(argv[3], "t") == 0) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(stderr, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec);
  }
  return sum == 12345u ? 1 : 0;
}
