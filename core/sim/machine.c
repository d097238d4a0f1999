/* machine.c: loading and checking machine files (lua/machines/NAME.lua).
 *
 * A machine file is data: a chunk that returns one table of named fields.
 * It runs in the sandbox like any script (budget, memory cap, no io; see
 * core/script/machine_file.c), and the table it returns is then read here,
 * from C with lua_next and raw access
 * only, so a hostile table (metatables, odd keys) cannot run code or raise
 * outside a protected call. The fields below are the whole schema: a name
 * that is not in it is an error with a "did you mean" suggestion, so a typo
 * never silently leaves a default in place. Errors are reported in a fixed
 * order (positional entries, unknown names, bad values in schema order,
 * missing fields, inconsistencies) so that the same file always gives the
 * same message, whatever order Lua's hash iterates in.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonr.h"
#include "machine.h"
#include "ops.h"

enum { T_STR, T_NUM, T_I64, T_I32, T_BOOL, T_FLOPS };

typedef struct mfield {
    const char *name;
    uint8_t type;
    uint8_t required;
    uint8_t positive;     /* > 0; otherwise >= 0 */
    size_t off, size;     /* where it lives in fe_machine */
    double min, max;      /* the sensible range (numbers) */
    const char *range;    /* the same in words, for messages and docs/simulator.md */
    const char *help;     /* for "missing field" messages */
} mfield;

/* Ranges. Wide enough for any real machine from a microcontroller to a
 * rack, narrow enough that no time the simulator computes can overflow:
 * bytes fit 63 bits, so bytes / 1e3 B/s, FLOPs / 1e3 FLOP/s and 2^24
 * tiles x 1 s stay finite. */
#define TiB 1099511627776.0
#define BW 1e3, 1e16, "1e3 to 1e16 bytes/s"
#define US 0, 1e6, "0 to 1e6 us"
#define FLOPS 1e3, 1e18, "1e3 to 1e18 FLOP/s"
#define COUNT1 1, 65536, "1 to 65536"
#define COUNT0 0, 65536, "0 to 65536"
/* F expands its arguments first, so BW and friends count as three. */
#define F(...) F_(__VA_ARGS__)
#define F_(f, t, req, pos, min, max, range, help) \
    {#f, t, req, pos, offsetof(fe_machine, f), sizeof(((fe_machine *)0)->f), min, max, range, help}
static const mfield fields[] = {
    F(name, T_STR, 1, 0, 0, 0, "", "the machine's name, e.g. \"gcu\""),
    F(description, T_STR, 0, 0, 0, 0, "", "one line about it"),
    F(l2_bytes, T_I64, 1, 1, 1, TiB, "1 byte to 1 TiB", "bytes of fast on-chip memory"),
    F(memory_bytes, T_I64, 1, 1, 1, 1024 * TiB, "1 byte to 1 PiB", "bytes of device memory (L3)"),
    F(l2_bandwidth, T_NUM, 1, 1, BW, "L2 bandwidth in bytes/s"),
    F(l3_bandwidth, T_NUM, 1, 1, BW, "device memory bandwidth in bytes/s"),
    F(local_bandwidth, T_NUM, 1, 1, BW, "bandwidth of register-spill traffic in bytes/s"),
    F(launch_us, T_NUM, 1, 0, US, "kernel launch overhead in microseconds"),
    F(tile_us, T_NUM, 1, 0, US, "overhead per tile of a tiled (TLF) kernel in microseconds"),
    F(matrix_flops, T_FLOPS, 1, 1, FLOPS,
      "FLOP/s of matmul/conv2d/sdpa per dtype, e.g. {f32 = 3e13}"),
    F(vector_flops, T_FLOPS, 1, 1, FLOPS, "FLOP/s of all other ops per dtype, e.g. {f32 = 8e12}"),
    F(registers, T_I32, 1, 1, COUNT1, "registers per thread"),
    F(reserved_registers, T_I32, 1, 0, COUNT0,
      "registers per thread kept for addresses and indices"),
    F(elements_per_thread, T_I32, 1, 1, COUNT1, "elements one thread keeps in flight"),
    F(link_bandwidth, T_NUM, 1, 1, BW, "interconnect bandwidth per rank in bytes/s"),
    F(link_latency_us, T_NUM, 1, 0, US, "interconnect latency per ring step in microseconds"),
    F(overlap, T_BOOL, 1, 0, 0, 0, "", "true if compute overlaps memory traffic (roofline max)"),
    F(executor, T_STR, 0, 0, 0, 0, "",
      "\"cuda\": price a group as the kernels fuseeng's CUDA back end runs it"),
    F(saturating_threads, T_I64, 0, 0, 0, 1 << 30, "0 to 2^30",
      "threads in flight a kernel needs to reach the memory bandwidth (with executor)"),
};
#undef F
#undef F_
#undef TiB
#undef BW
#undef US
#undef FLOPS
#undef COUNT1
#undef COUNT0
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static int find_field(const char *key)
{
    for (int i = 0; i < NFIELDS; i++)
        if (strcmp(fields[i].name, key) == 0)
            return i;
    return -1;
}

static const char *closest_field(const char *key)
{
    const char *names[NFIELDS];
    for (int i = 0; i < NFIELDS; i++)
        names[i] = fields[i].name;
    return fe_closest(key, names, NFIELDS);
}

static void field_list(char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < NFIELDS && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "", fields[i].name);
}

static void dtype_list(char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int d = 0; d < FE_NDTYPE && n < size; d++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", d ? ", " : "", fe_dtype_name(d));
}

/* ---- checking numbers (shared by files and machines filled in C) ---- */

/* 0 if v is acceptable for field f, else a message in msg. */
static int check_value(const mfield *f, const char *what, double v, char *msg, size_t size)
{
    if (!isfinite(v)) {
        snprintf(msg, size, "field '%s' must be a finite number, got %g", what, v);
        return -1;
    }
    if (f->positive && !(v > 0)) {
        snprintf(msg, size, "field '%s' must be positive, got %g", what, v);
        return -1;
    }
    if (!f->positive && v < 0) {
        snprintf(msg, size, "field '%s' must not be negative, got %g", what, v);
        return -1;
    }
    if ((f->type == T_I64 || f->type == T_I32) && v != floor(v)) {
        snprintf(msg, size, "field '%s' must be an integer, got %g", what, v);
        return -1;
    }
    if (v < f->min || v > f->max) {
        snprintf(msg, size, "field '%s' is %g, outside the range %s", what, v, f->range);
        return -1;
    }
    return 0;
}

/* 0 if s is UTF-8 text without control characters, else a message: the
 * name and description are printed in tables, traces and JSON. */
static int check_text(const char *what, const char *s, size_t len, char *msg, size_t size)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        size_t n = c < 0x80 ? 1 : fe_jr_utf8_len(p + i, len - i);
        if (n == 0) {
            snprintf(msg, size, "field '%s' is not valid UTF-8 (byte %zu)", what, i + 1);
            return -1;
        }
        if (c < 0x20 || c == 0x7f) {
            snprintf(msg, size, "field '%s' holds a control character (byte %zu is 0x%02x); "
                     "it is printed in reports", what, i + 1, c);
            return -1;
        }
        i += n;
    }
    return 0;
}

static int check_consistency(const fe_machine *m, char *msg, size_t size)
{
    if (m->l2_bytes > m->memory_bytes) {
        snprintf(msg, size, "l2_bytes (%lld) is larger than memory_bytes (%lld); the L2 holds "
                 "a part of device memory", (long long)m->l2_bytes, (long long)m->memory_bytes);
        return -1;
    }
    if (m->l2_bandwidth < m->l3_bandwidth) {
        snprintf(msg, size, "l2_bandwidth (%g) is below l3_bandwidth (%g); the L2 is the fast "
                 "memory", m->l2_bandwidth, m->l3_bandwidth);
        return -1;
    }
    if (m->saturating_threads && !m->executor[0]) {
        snprintf(msg, size, "saturating_threads needs an executor whose kernels it describes "
                 "(executor = \"cuda\")");
        return -1;
    }
    if (m->executor[0] && strcmp(m->executor, "cuda") != 0) {
        snprintf(msg, size, "executor '%s' is not one the simulator knows (\"cuda\", or leave it "
                 "out for one kernel per group)", m->executor);
        return -1;
    }
    if (m->reserved_registers >= m->registers) {
        snprintf(msg, size, "reserved_registers (%d) must be below registers (%d)",
                 (int)m->reserved_registers, (int)m->registers);
        return -1;
    }
    return 0;
}

/* ---- reading a table without running code ---- */

static const char *type_of(lua_State *L, int idx)
{
    return lua_typename(L, lua_type(L, idx));
}

/* The flops table at the top of the stack into out[]; 0 or a message. */
static int read_flops(lua_State *L, const mfield *f, double *out, char *msg, size_t size)
{
    int t = lua_gettop(L);
    char unknown[64] = "";
    int bad = FE_NDTYPE, positional = 0;
    char badmsg[300] = "";
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int d = -1;
        if (lua_type(L, -2) != LUA_TSTRING)
            positional = 1;
        else
            d = fe_dtype_parse(lua_tostring(L, -2));
        if (lua_type(L, -2) == LUA_TSTRING && d < 0) {
            const char *k = lua_tostring(L, -2);
            if (!unknown[0] || strcmp(k, unknown) < 0)
                snprintf(unknown, sizeof unknown, "%s", k);
        } else if (d >= 0 && d < bad) {
            char what[96];
            snprintf(what, sizeof what, "%s.%s", f->name, fe_dtype_name(d));
            if (lua_type(L, -1) != LUA_TNUMBER) {
                bad = d;
                snprintf(badmsg, sizeof badmsg, "field '%s' must be a number (FLOP/s), got %s",
                         what, type_of(L, -1));
            } else if (check_value(f, what, lua_tonumber(L, -1), badmsg, sizeof badmsg)) {
                bad = d;
            } else {
                out[d] = lua_tonumber(L, -1);
            }
        }
        lua_pop(L, 1);
    }
    char list[128];
    dtype_list(list, sizeof list);
    if (positional)
        snprintf(msg, size, "field '%s' must map dtype names to FLOP/s, e.g. {f32 = 3e13, "
                 "f16 = 1.2e14}; it has an entry without a dtype name", f->name);
    else if (unknown[0])
        snprintf(msg, size, "field '%s' has unknown dtype '%s'; expected one of %s", f->name,
                 unknown, list);
    else if (bad < FE_NDTYPE)
        snprintf(msg, size, "%s", badmsg);
    else if (out[FE_F32] <= 0)
        snprintf(msg, size, "field '%s' must give f32, the value used for dtypes it does not "
                 "list", f->name);
    else
        return 0;
    return -1;
}

/* The value at the top of the stack into m's field f; 0 or a message. */
static int read_value(lua_State *L, const mfield *f, fe_machine *m, char *msg, size_t size)
{
    char *at = (char *)m + f->off;
    int t = lua_type(L, -1);
    switch (f->type) {
    case T_STR: {
        size_t len;
        if (t != LUA_TSTRING) {
            snprintf(msg, size, "field '%s' must be a string, got %s", f->name, type_of(L, -1));
            return -1;
        }
        const char *s = lua_tolstring(L, -1, &len);
        if (len >= f->size || (f->required && len == 0)) {
            snprintf(msg, size, "field '%s' must be a non-empty string of at most %zu bytes",
                     f->name, f->size - 1);
            return -1;
        }
        if (check_text(f->name, s, len, msg, size))
            return -1;
        memcpy(at, s, len + 1);
        return 0;
    }
    case T_BOOL:
        if (t != LUA_TBOOLEAN) {
            snprintf(msg, size, "field '%s' must be true or false, got %s", f->name,
                     type_of(L, -1));
            return -1;
        }
        *(int *)at = lua_toboolean(L, -1);
        return 0;
    case T_FLOPS:
        if (t != LUA_TTABLE) {
            snprintf(msg, size, "field '%s' must be a table of dtype = FLOP/s, got %s", f->name,
                     type_of(L, -1));
            return -1;
        }
        return read_flops(L, f, (double *)at, msg, size);
    default:
        break;
    }
    if (t != LUA_TNUMBER) {
        snprintf(msg, size, "field '%s' must be a number, got %s", f->name, type_of(L, -1));
        return -1;
    }
    double v = lua_tonumber(L, -1);
    if (check_value(f, f->name, v, msg, size))
        return -1;
    if (f->type == T_I64)
        *(int64_t *)at = (int64_t)v;
    else if (f->type == T_I32)
        *(int32_t *)at = (int32_t)v;
    else
        *(double *)at = v;
    return 0;
}

int fe_machine_read(lua_State *L, int idx, const char *label, fe_machine *m, fe_error *err)
{
    idx = lua_absindex(L, idx);
    if (!label)
        label = "machine";
    if (lua_type(L, idx) != LUA_TTABLE)
        return fe_error_set(err, FE_EINPUT, "%s: a machine file must return a table of fields, "
                            "got %s", label, type_of(L, idx));
    if (!lua_checkstack(L, 8))
        return fe_error_set(err, FE_ENOMEM, "%s: out of Lua stack reading the machine", label);

    fe_machine tmp;
    memset(&tmp, 0, sizeof tmp);
    unsigned char seen[NFIELDS] = {0};
    char unknown[64] = "", msg[600] = "";
    int bad = NFIELDS, positional = 0;
    int top = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            positional = 1;
        } else {
            const char *key = lua_tostring(L, -2);
            int f = find_field(key);
            if (f < 0) {
                if (!unknown[0] || strcmp(key, unknown) < 0)
                    snprintf(unknown, sizeof unknown, "%s", key);
            } else {
                seen[f] = 1;
                if (f < bad && read_value(L, &fields[f], &tmp, msg, sizeof msg))
                    bad = f;
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, top);

    char list[512];
    field_list(list, sizeof list);
    if (positional)
        return fe_error_set(err, FE_EINPUT, "%s: the machine table has an entry without a "
                            "field name; write name = value pairs (fields: %s)", label, list);
    if (unknown[0]) {
        const char *near = closest_field(unknown);
        if (near)
            return fe_error_set(err, FE_EINPUT, "%s: unknown field '%s' (did you mean '%s'?)",
                                label, unknown, near);
        return fe_error_set(err, FE_EINPUT, "%s: unknown field '%s'; known fields: %s", label,
                            unknown, list);
    }
    if (bad < NFIELDS)
        return fe_error_set(err, FE_EINPUT, "%s: %s", label, msg);
    for (int i = 0; i < NFIELDS; i++)
        if (fields[i].required && !seen[i])
            return fe_error_set(err, FE_EINPUT, "%s: missing field '%s' (%s)", label,
                                fields[i].name, fields[i].help);
    if (check_consistency(&tmp, msg, sizeof msg))
        return fe_error_set(err, FE_EINPUT, "%s: %s", label, msg);
    *m = tmp;
    return FE_OK;
}

int fe_machine_check(const fe_machine *m, const char *label, fe_error *err)
{
    char msg[600];
    if (!label)
        label = m->name[0] ? m->name : "machine";
    for (int i = 0; i < NFIELDS; i++) {
        const mfield *f = &fields[i];
        const char *at = (const char *)m + f->off;
        int bad = 0;
        if (f->type == T_I64)
            bad = check_value(f, f->name, (double)*(const int64_t *)at, msg, sizeof msg);
        else if (f->type == T_I32)
            bad = check_value(f, f->name, (double)*(const int32_t *)at, msg, sizeof msg);
        else if (f->type == T_NUM)
            bad = check_value(f, f->name, *(const double *)at, msg, sizeof msg);
        else if (f->type == T_STR)
            bad = check_text(f->name, at, strnlen(at, f->size), msg, sizeof msg);
        else if (f->type == T_FLOPS) {
            const double *t = (const double *)at;
            for (int d = 0; d < FE_NDTYPE && !bad; d++) {
                char what[96];
                snprintf(what, sizeof what, "%s.%s", f->name, fe_dtype_name(d));
                if (t[d] != 0 || d == FE_F32)
                    bad = check_value(f, what, t[d], msg, sizeof msg);
            }
        }
        if (bad)
            return fe_error_set(err, FE_EINPUT, "%s: %s", label, msg);
    }
    if (check_consistency(m, msg, sizeof msg))
        return fe_error_set(err, FE_EINPUT, "%s: %s", label, msg);
    return FE_OK;
}

/* ---- using ---- */

double fe_machine_flops(const fe_machine *m, int op, int dtype)
{
    int matrix = op == FE_OP_MATMUL || op == FE_OP_CONV2D || op == FE_OP_SDPA;
    const double *t = matrix ? m->matrix_flops : m->vector_flops;
    return dtype >= 0 && dtype < FE_NDTYPE && t[dtype] > 0 ? t[dtype] : t[FE_F32];
}

static void flops_json(fe_jw *w, const double *t)
{
    fe_jw_obj_flat(w);
    for (int d = 0; d < FE_NDTYPE; d++) {
        if (t[d] > 0) {
            fe_jw_key(w, fe_dtype_name(d));
            fe_jw_num(w, t[d]);
        }
    }
    fe_jw_end(w);
}

void fe_machine_json(const fe_machine *m, fe_jw *w)
{
    fe_jw_obj(w);
    for (int i = 0; i < NFIELDS; i++) {
        const mfield *f = &fields[i];
        const char *at = (const char *)m + f->off;
        if (!f->required && (f->type == T_STR ? !at[0] : f->type == T_I64 && !*(const int64_t *)at))
            continue;
        fe_jw_key(w, f->name);
        switch (f->type) {
        case T_STR: fe_jw_str(w, at); break;
        case T_I64: fe_jw_int(w, *(const int64_t *)at); break;
        case T_I32: fe_jw_int(w, *(const int32_t *)at); break;
        case T_BOOL: fe_jw_bool(w, *(const int *)at); break;
        case T_FLOPS: flops_json(w, (const double *)at); break;
        default: fe_jw_num(w, *(const double *)at); break;
        }
    }
    fe_jw_end(w);
}

/* ---- writing a machine file ---- */

/* A Lua string literal of s (already checked UTF-8 without controls). */
static void lua_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Comment lines: each line of text after indent and "-- ", wrapped at
 * spaces to keep lines within 92 columns (a line that starts with spaces
 * is a table row and kept whole). */
static void comment(FILE *f, const char *indent, const char *text)
{
    int width = 92 - (int)strlen(indent) - 3;
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        int n = nl ? (int)(nl - text) : (int)strlen(text);
        while (n > width && text[0] != ' ') {
            int cut = width;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            if (cut == 0)
                break;
            fprintf(f, "%s-- %.*s\n", indent, cut, text);
            text += cut + 1;
            n -= cut + 1;
        }
        fprintf(f, "%s-- %.*s\n", indent, n, text);
        text += n;
        if (*text == '\n')
            text++;
    }
}

static void flops_lua(FILE *f, const double *t)
{
    fputc('{', f);
    int first = 1;
    for (int d = 0; d < FE_NDTYPE; d++)
        if (t[d] > 0) {
            fprintf(f, "%s%s = %.4g", first ? " " : ", ", fe_dtype_name(d), t[d]);
            first = 0;
        }
    fputs(" }", f);
}

void fe_machine_write_lua(const fe_machine *m, const char *header, const char *const *notes,
                          FILE *f)
{
    comment(f, "", header);
    fputs("return {\n", f);
    for (int i = 0; i < NFIELDS; i++) {
        const mfield *fd = &fields[i];
        const char *p = (const char *)m + fd->off;
        if (!fd->required && (fd->type == T_STR ? !p[0] : fd->type == T_I64 && !*(const int64_t *)p))
            continue;
        if (notes && notes[i] && notes[i][0])
            comment(f, "  ", notes[i]);
        fprintf(f, "  %s = ", fd->name);
        switch (fd->type) {
        case T_STR: lua_str(f, p); break;
        case T_NUM: fprintf(f, "%.4g", *(const double *)p); break;
        case T_I64: fprintf(f, "%lld", (long long)*(const int64_t *)p); break;
        case T_I32: fprintf(f, "%d", *(const int32_t *)p); break;
        case T_BOOL: fputs(*(const int *)p ? "true" : "false", f); break;
        default: flops_lua(f, (const double *)p); break;
        }
        fputs(",\n", f);
    }
    fputs("}\n", f);
}

int fe_machine_field_index(const char *name)
{
    return find_field(name);
}

int fe_machine_nfields(void)
{
    return NFIELDS;
}
