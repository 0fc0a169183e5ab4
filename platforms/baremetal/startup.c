/* Start-up of a bare-metal Armv7-M / Armv8-M program (platforms/baremetal): the vector table,
 * the reset handler and the fault handlers. The board's linker script
 * (platforms/baremetal/<board>/<board>.ld) places .vectors at the boot address and defines the
 * symbols used here.
 *
 * Reset: enable the FPU (and on Armv8.1-M the MVE/Helium unit, which shares its enable bits)
 * before any floating-point or vector instruction, copy .data from its load address, zero .bss
 * and the board's zero-initialised RAM sections (.sram_bss), run the static constructors, call
 * main() and hand its return value to the host (semihosting exit; in the hosted profile through
 * the C library's exit(), syscalls.c). A fault prints its name and the faulting address to stderr
 * and exits with status 3: a broken run ends instead of hanging. SysTick goes to SysTick_Handler
 * when the program defines one (a weak alias of the unexpected-exception handler otherwise).
 *
 * malloc is served by _sbrk over the linker script's __heap_start/__heap_end: in the firmware
 * profile a small region for the runtime's error messages only (Status carries its message as a
 * std::string), in the hosted profile (<board>-hosted.ld) megabytes; bm_heap_used() tells how
 * much of it was ever taken. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"

extern uint32_t __stack_top[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __sram_bss_start[], __sram_bss_end[];
extern unsigned char __heap_start[], __heap_end[];

int main(int argc, char** argv);
extern void __libc_init_array(void);
/* The end of the program after main in the hosted profile (syscalls.c: the C library's exit(),
 * which runs the atexit handlers and flushes stdio); absent in a firmware, which stops at once. */
__attribute__((weak, noreturn)) void bm_hosted_exit(int code);
/* The handle of this program for C++ static destructors (__cxa_atexit); the compiler's
 * crtbegin.o, not linked (-nostartfiles), would define it. */
void* __dso_handle = 0;

void bm_reset_handler(void);
void bm_c_start(void);

/* Reset in assembly: nothing may touch the FPU before CPACR grants CP10/CP11 full access. */
__attribute__((naked, noreturn)) void bm_reset_handler(void) {
  __asm__ volatile(
      "ldr r0, =0xE000ED88\n"  /* CPACR */
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n" /* CP10, CP11: full access (FPU; MVE on Armv8.1-M) */
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "ldr r0, =__stack_top\n"
      "mov sp, r0\n"
      "b bm_c_start\n");
}

static void zero(uint32_t* p, uint32_t* end) {
  while (p < end) *p++ = 0;
}

/* argv from the semihosting command line (qemu: the program name, then the -append text),
 * split at spaces; argv[0] is "mtlite" when the host passes none. */
enum { kMaxArgs = 16 };
static char g_cmdline[512];
static char* g_argv[kMaxArgs + 1];
static int split_command_line(void) {
  static char name[] = "mtlite";
  int argc = 0;
  const size_t n = bm_command_line(g_cmdline, sizeof g_cmdline);
  char* p = g_cmdline;
  while (n > 0 && *p && argc < kMaxArgs) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    g_argv[argc++] = p;
    while (*p && *p != ' ') ++p;
  }
  if (argc == 0) g_argv[argc++] = name;
  g_argv[argc] = NULL;
  return argc;
}

/* The stack, painted before main: bm_stack_high_water() is how deep it has ever been used. */
extern uint32_t __stack_bottom[];
enum { kStackPattern = 0x5354434Bu };
__attribute__((noinline)) static void paint_stack(void) {
  uint32_t* p = __stack_bottom;
  uint32_t* sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  sp -= 64; /* stay 256 bytes below this frame */
  while (p < sp) *p++ = kStackPattern;
}
size_t bm_stack_high_water(void) {
  const uint32_t* p = __stack_bottom;
  while (p < __stack_top && *p == kStackPattern) ++p;
  return (size_t)((const char*)__stack_top - (const char*)p);
}
size_t bm_stack_size(void) { return (size_t)((char*)__stack_top - (char*)__stack_bottom); }

__attribute__((noreturn, used)) void bm_c_start(void) {
  paint_stack();
  uint32_t* src = __data_load;
  for (uint32_t* dst = __data_start; dst < __data_end;) *dst++ = *src++;
  zero(__bss_start, __bss_end);
  zero(__sram_bss_start, __sram_bss_end);
  __libc_init_array();
  const int code = main(split_command_line(), g_argv);
  if (bm_hosted_exit) bm_hosted_exit(code);
  bm_exit(code);
}

/* ---- faults ----------------------------------------------------------------------------------- */
static void fault(const char* what) {
  volatile uint32_t* const cfsr = (volatile uint32_t*)0xE000ED28;
  volatile uint32_t* const mmfar = (volatile uint32_t*)0xE000ED34;
  volatile uint32_t* const bfar = (volatile uint32_t*)0xE000ED38;
  bm_write_str(2, "fault: ");
  bm_write_str(2, what);
  bm_write_str(2, " (CFSR ");
  bm_write_uint(2, *cfsr);
  bm_write_str(2, ", MMFAR ");
  bm_write_uint(2, *mmfar);
  bm_write_str(2, ", BFAR ");
  bm_write_uint(2, *bfar);
  bm_write_str(2, ")\n");
  bm_exit(3);
}
static void nmi_handler(void) { fault("NMI"); }
static void hard_fault_handler(void) { fault("HardFault"); }
static void mem_manage_handler(void) { fault("MemManage"); }
static void bus_fault_handler(void) { fault("BusFault"); }
static void usage_fault_handler(void) { fault("UsageFault"); }
static void secure_fault_handler(void) { fault("SecureFault"); }
static void unexpected_handler(void) { fault("unexpected exception"); }
void SysTick_Handler(void) __attribute__((weak, alias("unexpected_handler")));

typedef void (*bm_vector)(void);
__attribute__((section(".vectors"), used)) const bm_vector bm_vectors[16] = {
    (bm_vector)(uintptr_t)__stack_top,
    bm_reset_handler,
    nmi_handler,
    hard_fault_handler,
    mem_manage_handler,
    bus_fault_handler,
    usage_fault_handler,
    secure_fault_handler,
    0,
    0,
    0,
    unexpected_handler, /* SVCall */
    unexpected_handler, /* DebugMonitor */
    0,
    unexpected_handler, /* PendSV */
    SysTick_Handler,
};

/* ---- the C library's system calls -------------------------------------------------------------- */
static unsigned char* g_brk = __heap_start;
static size_t g_heap_high;

void* _sbrk(ptrdiff_t incr) {
  if (incr < 0 || (size_t)incr > (size_t)(__heap_end - g_brk)) return (void*)-1;
  unsigned char* old = g_brk;
  g_brk += incr;
  g_heap_high = (size_t)(g_brk - __heap_start);
  return old;
}
size_t bm_heap_used(void) { return g_heap_high; }
size_t bm_heap_size(void) { return (size_t)(__heap_end - __heap_start); }

void _exit(int code) { bm_exit(code); }

/* abort(): libstdc++ calls it when operator new finds no memory (the nano library is built
 * without exceptions) or on a length error; the C library's own raises a signal (no OS here). */
void abort(void) {
  bm_write_str(2, "abort\n");
  bm_exit(134);
}

/* The C library's __libc_init_array calls _init after the .preinit_array entries; the compiler's
 * crti/crtn (not linked: -nostartfiles) would define it. Constructors are in .init_array. */
void _init(void) {}
void _fini(void) {}
