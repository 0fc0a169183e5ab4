/* Measuring the RAM a translation really uses, by painting: memory is filled with a pattern
 * before, and what is no longer the pattern afterwards was used. Shared by `mtlite info
 * --limits` (its stack figure is a painted probe translation) and examples/firmware (which
 * measures its own run, to check that figure). C and C++.
 *
 * Stack: mtlite_stack_paint(&p, bytes) fills `bytes` of the stack just below the caller's frame;
 * calls the caller makes next run in that region; mtlite_stack_used(&p) then returns how deep
 * below the painted top they reached (the high-water mark of the calls since the paint). Call
 * both from the same function, around the call being measured.
 * Memory (an arena): mtlite_fill_pattern, then mtlite_high_water = 1 + the offset of the last
 * byte that is not the pattern (0: untouched). A byte written with the pattern value itself
 * counts as untouched, so the figures can be low by a few bytes at the very end. */
#ifndef MTLITE_RAM_PROBE_H_
#define MTLITE_RAM_PROBE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uintptr_t bottom, top; /* painted stack [bottom, top) */
} mtlite_stack_probe;

void mtlite_stack_paint(mtlite_stack_probe* probe, size_t bytes);
size_t mtlite_stack_used(const mtlite_stack_probe* probe);

void mtlite_fill_pattern(void* memory, size_t bytes);
size_t mtlite_high_water(const void* memory, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* MTLITE_RAM_PROBE_H_ */
