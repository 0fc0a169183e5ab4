/* The C library's system calls for the hosted profile of platforms/baremetal (<board>-hosted.ld;
 * mtlite_baremetal_executable(... PROFILE hosted), scripts/baremetal_kernel_test.sh): newlib's
 * stdio, and through it C++ iostreams, on the semihosting console (semihosting.c): descriptor 0
 * is the host's standard input, 1 its standard output, 2 its standard error, all character
 * devices (stdout is line-buffered). No files: open fails. The heap is startup.c's _sbrk over the
 * profile's large region; after main the program ends through exit() (bm_hosted_exit), so the
 * atexit handlers run and stdio is flushed before the exit status goes to the host.
 * A firmware does not link this file: it has no stdio. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>

#include "semihosting.h"

int _write(int fd, const char* buf, int n);
int _read(int fd, char* buf, int n);
int _close(int fd);
int _fstat(int fd, struct stat* st);
int _isatty(int fd);
off_t _lseek(int fd, off_t offset, int whence);
int _open(const char* path, int flags, ...);
int _kill(int pid, int sig);
int _getpid(void);
int _gettimeofday(struct timeval* tv, void* tz);
uint64_t mtlite_board_clock_ns(void);
__attribute__((noreturn)) void bm_hosted_exit(int code);

static int console(int fd) { return fd >= 0 && fd <= 2; }

int _write(int fd, const char* buf, int n) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  const long written = bm_write(fd, buf, (size_t)n);
  if (written < 0 || (written == 0 && n > 0)) {
    errno = EIO;
    return -1;
  }
  return (int)written;
}

int _read(int fd, char* buf, int n) {
  if (fd != 0) {
    errno = EBADF;
    return -1;
  }
  const long got = bm_read(buf, (size_t)n);
  if (got < 0) {
    errno = EIO;
    return -1;
  }
  return (int)got;
}

int _close(int fd) {
  if (console(fd)) return 0;
  errno = EBADF;
  return -1;
}

int _fstat(int fd, struct stat* st) {
  if (!console(fd)) {
    errno = EBADF;
    return -1;
  }
  memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR;
  return 0;
}

int _isatty(int fd) {
  if (console(fd)) return 1;
  errno = EBADF;
  return 0;
}

off_t _lseek(int fd, off_t offset, int whence) {
  (void)fd, (void)offset, (void)whence;
  errno = ESPIPE;
  return -1;
}

int _open(const char* path, int flags, ...) {
  (void)path, (void)flags;
  errno = ENOSYS;
  return -1;
}

/* raise(): no other process and no signal delivery; abort() is startup.c's. */
int _kill(int pid, int sig) {
  (void)pid, (void)sig;
  errno = EINVAL;
  return -1;
}
int _getpid(void) { return 1; }

/* The time since the program started (semihosting SYS_CLOCK, centiseconds). */
int _gettimeofday(struct timeval* tv, void* tz) {
  (void)tz;
  if (tv) {
    const uint64_t us = mtlite_board_clock_ns() / 1000u;
    tv->tv_sec = (time_t)(us / 1000000u);
    tv->tv_usec = (suseconds_t)(us % 1000000u);
  }
  return 0;
}

void bm_hosted_exit(int code) { exit(code); }
