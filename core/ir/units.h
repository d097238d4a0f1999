/* units.h: quantities as people read them in reports and tables. */
#ifndef FE_UNITS_H
#define FE_UNITS_H

#include <stddef.h>

/* Human-readable quantities into buf, which is returned ("12.5 MiB",
 * "1.23 TFLOP", "3.2 us"): three significant digits, binary units for
 * bytes. */
const char *fe_fmt_bytes(double bytes, char *buf, size_t size);
const char *fe_fmt_flops(double flops, char *buf, size_t size);
const char *fe_fmt_time(double seconds, char *buf, size_t size);

#endif
