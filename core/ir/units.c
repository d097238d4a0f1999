/* units.c: quantities as people read them in reports (see units.h). */
#include <stdio.h>

#include "units.h"

/* v divided by base until it is below base, with its unit: whole in the
 * first unit, else with `decimals` decimals, or (decimals < 0) 3 below 10,
 * 2 below 100 and 1 above. */
static const char *scaled(double v, double base, const char *const *units, int nunits,
                          int decimals, char *buf, size_t size)
{
    int u = 0;
    double a = v < 0 ? -v : v;
    while (a >= base && u + 1 < nunits) {
        a /= base;
        v /= base;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f %s", v, units[0]);
    else
        snprintf(buf, size, "%.*f %s", decimals >= 0 ? decimals : a >= 100 ? 1 : a >= 10 ? 2 : 3,
                 v, units[u]);
    return buf;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

const char *fe_fmt_bytes(double bytes, char *buf, size_t size)
{
    return scaled(bytes, 1024, byte_units, 7, -1, buf, size);
}

const char *fe_fmt_bytes_table(double bytes, char *buf, size_t size)
{
    return scaled(bytes, 1024, byte_units, 7, 1, buf, size);
}

const char *fe_fmt_flops(double flops, char *buf, size_t size)
{
    static const char *const u[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
    return scaled(flops, 1000, u, 7, -1, buf, size);
}

const char *fe_fmt_time(double s, char *buf, size_t size)
{
    if (s < 1e-3)
        snprintf(buf, size, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, size, "%.3f ms", s * 1e3);
    else
        snprintf(buf, size, "%.3f s", s);
    return buf;
}
