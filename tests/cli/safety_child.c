/* safety_child: a program for tests/cli/test_run_safety.cpp. It always makes NVTX calls first (2 `step`
 * ranges), so regionprof is loaded into it under `regionprof run`; then what argv[1] asks for:
 *   exit N          "out\n" to stdout, "err\n" to stderr, exit(N)
 *   segv|abort|term|kill
 *                   "before\n" to stdout and stderr, then a write to a PROT_NONE page, abort(),
 *                   raise(SIGTERM), raise(SIGKILL)
 *   binary MIB      MIB MiB to stdout: the byte values 0..255 repeating, written with write(2)
 *   interleave      1000 alternating chunks of every byte value to stdout and stderr; the last chunk of
 *                   each ends without a newline
 *   cat             stdin to stdout, then "eof\n" to stderr
 *   close_stdout    close(1), then "closed\n" to stderr and a printf that goes nowhere; exit 0
 *   reuse_stderr F  close(2), open F (it is fd 2), "program data\n" into it, then raise(SIGTERM)
 *   remove_dir D    rmdir(D), "removed\n" to stdout, exit 3
 *   chmod_dir D     chmod(D, 0555), "read-only\n" to stdout, exit 3
 *   env             every environment entry to stdout, each followed by a NUL byte
 *   argv            argc, then every argv[i] (i >= 1), each followed by a NUL byte
 * Output goes through write(2) unless said otherwise, so the bytes are exactly those named here. */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

static void steps(void) {
  for (int i = 0; i < 2; ++i) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
}

/* Every byte, or exit 90: a short write is a test failure, not a silent truncation. */
static void put(int fd, const void* data, size_t size) {
  const char* bytes = data;
  while (size > 0) {
    const ssize_t written = write(fd, bytes, size);
    if (written <= 0) exit(90);
    bytes += written;
    size -= (size_t)written;
  }
}

static void put_text(int fd, const char* text) { put(fd, text, strlen(text)); }

int main(int argc, char** argv) {
  steps();
  const char* mode = argc > 1 ? argv[1] : "";
  const char* operand = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "exit") == 0) {
    put_text(1, "out\n");
    put_text(2, "err\n");
    exit(atoi(operand));
  }
  if (strcmp(mode, "segv") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "term") == 0 ||
      strcmp(mode, "kill") == 0) {
    put_text(1, "before\n");
    put_text(2, "before\n");
    if (strcmp(mode, "segv") == 0) { /* a real fault, not undefined behaviour a sanitizer would report */
      volatile char* const page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (page == MAP_FAILED) return 96;
      page[0] = 1;
    }
    if (strcmp(mode, "abort") == 0) abort();
    raise(strcmp(mode, "term") == 0 ? SIGTERM : SIGKILL);
    return 91;
  }
  if (strcmp(mode, "binary") == 0) {
    unsigned char block[65536];
    for (size_t i = 0; i < sizeof block; ++i) block[i] = (unsigned char)i;
    const long blocks = atol(operand) * (1 << 20) / (long)sizeof block;
    for (long i = 0; i < blocks; ++i) put(1, block, sizeof block);
    return 0;
  }
  if (strcmp(mode, "interleave") == 0) {
    unsigned char chunk[256];
    for (int i = 0; i < 256; ++i) chunk[i] = (unsigned char)(255 - i); /* ends with 0: no newline */
    for (int i = 0; i < 1000; ++i) {
      put(1, chunk, (size_t)(i % 256) + 1);
      put(2, chunk + i % 7, 256 - (size_t)(i % 7));
    }
    return 0;
  }
  if (strcmp(mode, "cat") == 0) {
    char buffer[4096];
    for (;;) {
      const ssize_t got = read(0, buffer, sizeof buffer);
      if (got < 0) return 92;
      if (got == 0) break;
      put(1, buffer, (size_t)got);
    }
    put_text(2, "eof\n");
    return 0;
  }
  if (strcmp(mode, "close_stdout") == 0) {
    close(1);
    put_text(2, "closed\n");
    printf("to a closed stdout\n");
    return 0;
  }
  if (strcmp(mode, "reuse_stderr") == 0) {
    close(2);
    if (open(operand, O_WRONLY | O_CREAT | O_TRUNC, 0644) != 2) return 93;
    put_text(2, "program data\n");
    raise(SIGTERM);
    return 91;
  }
  if (strcmp(mode, "remove_dir") == 0) {
    if (rmdir(operand) != 0) return 94;
    put_text(1, "removed\n");
    exit(3);
  }
  if (strcmp(mode, "chmod_dir") == 0) {
    if (chmod(operand, 0555) != 0) return 95;
    put_text(1, "read-only\n");
    exit(3);
  }
  if (strcmp(mode, "env") == 0) {
    for (char** entry = environ; *entry != NULL; ++entry) put(1, *entry, strlen(*entry) + 1);
    return 0;
  }
  if (strcmp(mode, "argv") == 0) {
    char count[32];
    snprintf(count, sizeof count, "%d", argc);
    put(1, count, strlen(count) + 1);
    for (int i = 1; i < argc; ++i) put(1, argv[i], strlen(argv[i]) + 1);
    return 0;
  }
  put_text(2, "safety_child: unknown mode\n");
  return 2;
}
