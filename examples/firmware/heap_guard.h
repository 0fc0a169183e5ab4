/* Counts heap allocations (heap_guard.c). */
#ifndef MTLITE_EXAMPLE_HEAP_GUARD_H_
#define MTLITE_EXAMPLE_HEAP_GUARD_H_

long heap_guard_count(void); /* calls of malloc & co. since the program started */
int heap_guard_active(void); /* 0: this C library's allocator cannot be replaced (count is 0) */

#endif
