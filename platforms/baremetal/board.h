/* Board support of platforms/baremetal for programs: the console (semihosting.h) and what the
 * start-up (startup.c) measures.
 *   bm_stack_high_water()  bytes of the main stack ever used (the stack is painted before main)
 *   bm_stack_size()        the main stack's size (the linker script's __stack_size)
 *   bm_heap_used()         bytes the C library's malloc has ever taken from the heap (_sbrk: in
 *                          the firmware profile the error-message heap); 0 when nothing was allocated
 *   bm_heap_size()         that heap's size (__heap_size)
 * Large zero-initialised arrays go to the board's big RAM with BM_SRAM_BSS (section .sram_bss,
 * zeroed by the start-up); plain .bss stays in the board's fast data RAM. */
#ifndef MTLITE_BAREMETAL_BOARD_H_
#define MTLITE_BAREMETAL_BOARD_H_

#include <stddef.h>

#include "semihosting.h"

#define BM_SRAM_BSS __attribute__((section(".sram_bss")))

#ifdef __cplusplus
extern "C" {
#endif

size_t bm_stack_high_water(void);
size_t bm_stack_size(void);
size_t bm_heap_used(void);
size_t bm_heap_size(void);

#ifdef __cplusplus
}
#endif

#endif /* MTLITE_BAREMETAL_BOARD_H_ */
