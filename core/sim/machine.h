/* machine.h: a machine description for the GCU simulator (sim.h).
 *
 * A machine is a Lua data file (lua/machines/NAME.lua) that returns one
 * table of named fields; core/script/machine_file.c runs it in the sandbox
 * and machine.c checks every field (type, range, unknown names, consistency)
 * before the simulator sees it. The struct fields carry the file's names
 * and units, so a reader of gcu.lua and of this header sees the same words.
 * docs/simulator.md documents each field.
 */
#ifndef FE_MACHINE_H
#define FE_MACHINE_H

#include <lua.h>
#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "jsonw.h"

typedef struct fe_machine {
    char name[64];
    char description[256];
    char file[1024];               /* path it was loaded from; "" if filled in C */

    int64_t l2_bytes;              /* fast on-chip memory (seed 004: 16 MiB) */
    int64_t memory_bytes;          /* device memory (L3) capacity */
    double l2_bandwidth;           /* bytes/s (seed 004: 1 TB/s) */
    double l3_bandwidth;           /* bytes/s (seed 004: 100 GB/s) */
    double local_bandwidth;        /* bytes/s of register-spill (local memory) traffic */
    double launch_us;              /* per kernel (seed 004: 10 us) */
    double tile_us;                /* per tile of a TLF loop */
    double matrix_flops[FE_NDTYPE];/* FLOP/s of matmul, conv2d, sdpa; 0 = use f32's */
    double vector_flops[FE_NDTYPE];/* FLOP/s of every other op; 0 = use f32's */
    int32_t registers;             /* per thread (255) */
    int32_t reserved_registers;    /* per thread, for addresses and indices */
    int32_t elements_per_thread;   /* elements one thread keeps in flight */
    double link_bandwidth;         /* bytes/s per rank of the collective interconnect */
    double link_latency_us;        /* per ring step */
    int overlap;                   /* 1: time = max(compute, memory); 0: their sum */
    char executor[16];             /* "": every group one kernel (the GCU); "cuda": a group
                                      as the kernels the CUDA back end makes of it (sim.c) */
    int64_t saturating_threads;    /* with an executor: threads in flight a kernel needs to
                                      reach the bandwidths; fewer stream proportionally
                                      slower (0: every kernel reaches them) */
} fe_machine;

/* Read and check the machine table at stack index idx (for bindings that
 * get a table from a script); label names it in messages. Never raises a
 * Lua error and never calls metamethods. FE_OK or FE_EINPUT. */
int fe_machine_read(lua_State *L, int idx, const char *label, fe_machine *m, fe_error *err);

/* Check a machine filled in C (ranges and consistency, as for files). */
int fe_machine_check(const fe_machine *m, const char *label, fe_error *err);

/* Peak FLOP/s of an op of the given dtype on m (matrix or vector table,
 * falling back to the table's f32 entry). */
double fe_machine_flops(const fe_machine *m, int op, int dtype);

/* Write m as a machine file (Lua) to f: header as comment lines on top,
 * then every field in the schema's order, notes[i] (may be NULL, as may
 * any entry) as comment lines above field i (fe_machine_field_index). */
void fe_machine_write_lua(const fe_machine *m, const char *header, const char *const *notes,
                          FILE *f);
/* The schema position of a field name (for notes), or -1; the count. */
int fe_machine_field_index(const char *name);
int fe_machine_nfields(void);

/* Write the machine as one JSON object. */
void fe_machine_json(const fe_machine *m, fe_jw *w);

#endif
