/* Console and exit of a bare-metal program under a debugger or an emulator, through Arm
 * semihosting (`bkpt 0xab` on M-profile; qemu-system-arm -semihosting-config enable=on,target=native).
 * These calls are the whole I/O layer of a firmware (no C library stdio); the hosted profile's
 * system calls (syscalls.c) put the C library's stdio on them.
 *
 *   bm_read(buf, n)        reads up to n bytes of the host's standard input; 0 at end of input, -1 on error
 *   bm_write(fd, buf, n)   writes to the host's standard output (fd 1) or error (fd 2); the bytes
 *                          written (n unless the host refused some), -1 when there is no such handle
 *   bm_write_str(fd, s)    the same for a NUL-terminated string
 *   bm_exit(code)          ends the program with that exit status (qemu exits with it)
 *   bm_command_line(b, n)  the program's command line (qemu: the -append text) into b, NUL-terminated;
 *                          0 when there is none
 *
 * On a board without a debugger attached a `bkpt` halts the core: replace these with the UART. */
#ifndef MTLITE_BAREMETAL_SEMIHOSTING_H_
#define MTLITE_BAREMETAL_SEMIHOSTING_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

long bm_read(char* buf, size_t n);
long bm_write(int fd, const char* buf, size_t n);
void bm_write_str(int fd, const char* s);
void bm_write_uint(int fd, unsigned long long v);
__attribute__((noreturn)) void bm_exit(int code);
size_t bm_command_line(char* buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* MTLITE_BAREMETAL_SEMIHOSTING_H_ */
