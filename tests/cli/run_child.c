/* run_child: a program for the `regionprof run` tests. NVTX ranges `step` (each holding `work`), then
 * what argv[1] asks for:
 *   exit N      2 steps, a line to stdout and one to stderr, exit status N
 *   nomarkers   2 `work` ranges and no `step`
 *   abort       2 steps, then a third left open by abort()
 *   term        2 steps, then a third left open by raise(SIGTERM)
 *   fork        2 steps; a forked child does 5 steps of its own and exits normally first
 *   chdir       chdir("/"), then 2 steps
 *   wrapper     no NVTX call of its own: runs `run_child exit 5` as a child process and exits with its
 *               status, as a wrapper script would
 *   nested      2 steps, each `outer` holding `inner` twice, the second `inner` holding `inner` (the
 *               region tree of docs/design.md, rule 14) */
#define _POSIX_C_SOURCE 200809L
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void spin(void) {
  volatile double sum = 0.0;
  for (int j = 0; j < 100000; ++j) sum = sum + (double)j;
}

static void steps(int count) {
  for (int i = 0; i < count; ++i) {
    nvtxRangePushA("step");
    nvtxRangePushA("work");
    volatile double sum = 0.0;
    for (int j = 0; j < 100000; ++j) sum = sum + (double)j;
    nvtxRangePop();
    nvtxRangePop();
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "exit";
  if (strcmp(mode, "exit") == 0) {
    steps(2);
    printf("run_child: hello\n");
    fprintf(stderr, "run_child: to stderr\n");
    return argc > 2 ? atoi(argv[2]) : 0;
  }
  if (strcmp(mode, "nomarkers") == 0) {
    for (int i = 0; i < 2; ++i) {
      nvtxRangePushA("work");
      nvtxRangePop();
    }
    return 0;
  }
  if (strcmp(mode, "abort") == 0 || strcmp(mode, "term") == 0) {
    steps(2);
    nvtxRangePushA("step");
    fflush(stdout);
    if (strcmp(mode, "abort") == 0) abort();
    raise(SIGTERM);
    return 0;
  }
  if (strcmp(mode, "fork") == 0) {
    steps(2);
    const pid_t child = fork();
    if (child == 0) {
      steps(5);
      exit(0); /* runs the inherited exit handlers: they must not write */
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (strcmp(mode, "wrapper") == 0) {
    const pid_t child = fork();
    if (child == 0) {
      execl("/proc/self/exe", argv[0], "exit", "5", (char*)NULL);
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (strcmp(mode, "nested") == 0) {
    for (int i = 0; i < 2; ++i) {
      nvtxRangePushA("step");
      nvtxRangePushA("outer");
      nvtxRangePushA("inner");
      spin();
      nvtxRangePop();
      nvtxRangePushA("inner");
      nvtxRangePushA("inner");
      spin();
      nvtxRangePop();
      nvtxRangePop();
      nvtxRangePop();
      nvtxRangePop();
    }
    return 0;
  }
  if (strcmp(mode, "chdir") == 0) {
    if (chdir("/") != 0) return 1;
    steps(2);
    return 0;
  }
  fprintf(stderr, "run_child: unknown mode '%s'\n", mode);
  return 2;
}
