/* arena.h: offsets in one block of memory for tensors that live over
 * steps, so that tensors alive at the same time never share bytes and the
 * others may (a plan's activations on the GPU, gpu_exec.c). */
#ifndef FE_ARENA_H
#define FE_ARENA_H

#include <stdint.h>

typedef struct fe_life {
    int32_t t;          /* the caller's tag (a tensor id) */
    int def, last;      /* alive from step def to step last, both included */
    int64_t bytes;
    int64_t off;        /* set by fe_arena_place */
} fe_life;

/* Place lv[0..n) (reordered: largest first), each at the lowest offset, a
 * multiple of align, where it overlaps no tensor placed before it whose
 * steps meet its own. Returns the arena's size, or -1 when out of memory
 * (the offsets are then unset). */
int64_t fe_arena_place(fe_life *lv, int n, int64_t align);

#endif
