/* provenance.h: what a report says about where it came from (issue 37):
 * fuseeng's version and the commit it was built from, the command line,
 * the date, the host's CPU and cores, the GPU when one measured, and each
 * model's file and content hash. One owner for every report format. */
#ifndef FE_PROVENANCE_H
#define FE_PROVENANCE_H

#include <stdint.h>

#include "jsonw.h"

typedef struct fe_prov {
    char version[32], commit[64];
    char date[32];                   /* UTC, ISO 8601: 2026-11-29T20:05:00Z */
    char command[2048];              /* as the command line gave it, "" if not known */
    char cpu[256];                   /* the host CPU's model name */
    int cores;                       /* online CPUs */
    char gpu[160];                   /* the GPU that measured, "" if none */
} fe_prov;

/* Fill p for a report made now on this host; gpu: a GPU measured it (its
 * name is then asked of the CUDA driver, already opened). */
void fe_prov_now(fe_prov *p, int gpu);

/* The SHA-256 of file path's bytes as 64 hex digits into hex (65 bytes),
 * or "unknown" if it cannot be read. */
void fe_prov_file_sha256(const char *path, char hex[65]);

/* p as JSON members of the object w has open: "fuseeng", "commit",
 * "command", "date", "cpu", "cores" and "gpu" (null without one). */
void fe_prov_json(const fe_prov *p, fe_jw *w);

/* One line: "fuseeng 0.1.0 (commit abc123), 2026-11-29T20:05:00Z, Intel
 * ... (2 cores)[, GPU NAME]" into buf. */
void fe_prov_line(const fe_prov *p, char *buf, size_t size);

#endif
