/* Arm semihosting (Arm "Semihosting for AArch32 and AArch64", v3): operation in r0, parameter
 * block address in r1, result in r0; on M-profile the trap is `bkpt 0xab`. */
#include "semihosting.h"

#include <stdint.h>

enum {
  kSysOpen = 0x01,
  kSysWrite = 0x05,
  kSysRead = 0x06,
  kSysClock = 0x10,
  kSysGetCmdline = 0x15,
  kSysExit = 0x18,
  kSysExitExtended = 0x20,
};
enum { kAdpStoppedApplicationExit = 0x20026 };

static uintptr_t call(uintptr_t op, const void* arg) {
  register uintptr_t r0 __asm__("r0") = op;
  register uintptr_t r1 __asm__("r1") = (uintptr_t)arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* ":tt" opened with mode 0 (r) is the host's stdin, 4 (w) its stdout, 8 (a) its stderr. */
static long g_handle[3] = {-1, -1, -1};
static long handle(int fd) {
  if (fd < 0 || fd > 2) return -1;
  if (g_handle[fd] < 0) {
    static const char tt[] = ":tt";
    const uintptr_t block[3] = {(uintptr_t)tt, (uintptr_t)(fd * 4), 3};
    g_handle[fd] = (long)call(kSysOpen, block);
  }
  return g_handle[fd];
}

long bm_read(char* buf, size_t n) {
  const long h = handle(0);
  if (h < 0) return -1;
  const uintptr_t block[3] = {(uintptr_t)h, (uintptr_t)buf, n};
  const uintptr_t not_read = call(kSysRead, block); /* the bytes NOT read; n: end of input */
  if (not_read > n) return -1;
  return (long)(n - not_read);
}

long bm_write(int fd, const char* buf, size_t n) {
  const long h = handle(fd);
  if (h < 0) return -1;
  size_t done = 0;
  while (done < n) {
    const uintptr_t block[3] = {(uintptr_t)h, (uintptr_t)(buf + done), n - done};
    const uintptr_t not_written = call(kSysWrite, block);
    if (not_written >= n - done) break; /* nothing written: the host refuses, give up */
    done = n - not_written;
  }
  return (long)done;
}

void bm_write_str(int fd, const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  bm_write(fd, s, n);
}

void bm_write_uint(int fd, unsigned long long v) {
  char buf[24];
  size_t i = sizeof buf;
  do {
    buf[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  bm_write(fd, buf + i, sizeof buf - i);
}

size_t bm_command_line(char* buf, size_t n) {
  if (n == 0) return 0;
  uintptr_t block[2] = {(uintptr_t)buf, n};
  if (call(kSysGetCmdline, block) != 0) {
    buf[0] = '\0';
    return 0;
  }
  size_t len = block[1] < n ? block[1] : n - 1;
  buf[len] = '\0';
  return len;
}

void bm_exit(int code) {
  /* SYS_EXIT_EXTENDED carries the exit status; SYS_EXIT (a host without the extension) only
   * success or failure. */
  const uintptr_t block[2] = {kAdpStoppedApplicationExit, (uintptr_t)code};
  call(kSysExitExtended, block);
  call(kSysExit, (const void*)(uintptr_t)(code == 0 ? kAdpStoppedApplicationExit : 0x20023));
  for (;;) __asm__ volatile("wfi");
}

/* The runtime's platform hooks (runtime/platform/baremetal.cc): its diagnostics go to stderr,
 * a fatal programming error ends the run with that status. */
void mtlite_board_diagnostic(const char* text, size_t length);
__attribute__((noreturn)) void mtlite_board_halt(int code);
uint64_t mtlite_board_clock_ns(void);
void mtlite_board_diagnostic(const char* text, size_t length) { bm_write(2, text, length); }
__attribute__((noreturn)) void mtlite_board_halt(int code) { bm_exit(code); }
/* SYS_CLOCK: centiseconds since the program started (coarse, but every host has it). */
uint64_t mtlite_board_clock_ns(void) {
  const uintptr_t cs = call(kSysClock, 0);
  return cs == (uintptr_t)-1 ? 0 : (uint64_t)cs * 10000000u;
}
