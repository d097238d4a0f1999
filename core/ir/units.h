/* units.h: quantities as people read them in reports and tables. */
#ifndef FE_UNITS_H
#define FE_UNITS_H

#include <stddef.h>

/* Human-readable quantities into buf, which is returned ("12.50 MiB",
 * "1.230 TFLOP"): three decimals below 10, two below 100, one above;
 * binary units for bytes. */
const char *fe_fmt_bytes(double bytes, char *buf, size_t size);
const char *fe_fmt_flops(double flops, char *buf, size_t size);

/* The simulator tables' style, and the policies' reasons' (fe.fmt_bytes
 * and fe.fmt_time in lua/fuseeng.lua print the same): one decimal above
 * bytes ("16.0 MiB"), times in us with one decimal, in ms and s with three
 * ("389.4 us", "2.508 ms", "1.250 s"). */
const char *fe_fmt_bytes_table(double bytes, char *buf, size_t size);
const char *fe_fmt_time(double seconds, char *buf, size_t size);

#endif
