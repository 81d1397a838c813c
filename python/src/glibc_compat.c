/* The wheel's binaries link libstdc++ statically (-static-libstdc++). Debian 12's libstdc++.a was built
 * against glibc 2.36, and its std::random_device (pulled in by the COW-string instantiations, never
 * called by regionprof) references arc4random@GLIBC_2.36, which alone would make the wheel
 * manylinux_2_36. -Wl,--wrap=arc4random sends those references here: getrandom (glibc 2.25), so the
 * newest symbol the wheel needs stays GLIBC_2.34 (docs/python.md, "Which tag, and why"). */
#include <errno.h>
#include <sys/random.h>

__attribute__((visibility("hidden"))) unsigned int __wrap_arc4random(void);

unsigned int __wrap_arc4random(void) {
  unsigned int value = 0;
  while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value) {
    if (errno != EINTR) break; /* getrandom fails otherwise only without the syscall (Linux < 3.17) */
  }
  return value;
}
