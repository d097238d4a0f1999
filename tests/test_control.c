/* test_control.c: fe_control_at (core/ir/error.c), the scan every reason,
 * name and message passes before it is shown: it finds the first C0, DEL
 * or UTF-8 C1 control at any offset (it skips eight bytes at a time), keeps
 * '\n' and '\t' when asked, and never flags printable UTF-8 such as the
 * 0xc2 lead of U+00A2. Checked against a byte-by-byte reference on
 * generated strings. */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "error.h"

static long reference(const char *s, int keep_lines)
{
    const unsigned char *u = (const unsigned char *)s;
    for (long i = 0; u[i]; i++) {
        if (keep_lines && (u[i] == '\n' || u[i] == '\t'))
            continue;
        if (u[i] < 0x20 || u[i] == 0x7f || (u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f))
            return i;
    }
    return -1;
}

static void table(void **s)
{
    (void)s;
    static const struct { const char *text; int keep; long want; } cases[] = {
        {"", 0, -1},
        {"plain text of more than eight bytes", 0, -1},
        {"cannot fuse (benchmark): fusing {'a', 'b'} with {'c'}", 0, -1},
        {"\x1b[31mred", 0, 0},
        {"abcdefgh\x7f", 0, 8},
        {"abcdefghijklmno\x01", 0, 15},
        {"two\nlines", 0, 3},
        {"two\nlines and a\ttab", 1, -1},
        {"C1 \xc2\x85 next line", 0, 3},
        {"cent \xc2\xa2 is printable, \xc2\x9b is not", 0, 22},
        {"ends on a lead \xc2", 0, -1},
        {"\xc3\xa9t\xc3\xa9 caf\xc3\xa9", 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long got = fe_control_at(cases[i].text, cases[i].keep);
        if (got != cases[i].want)
            fail_msg("case %zu (\"%s\"): %ld, want %ld", i, cases[i].text, got, cases[i].want);
    }
}

/* One special byte (or pair) placed at every offset of strings up to 40
 * bytes, over a printable background with high bytes in it. */
static void every_offset(void **s)
{
    (void)s;
    static const char *const specials[] = {"\x01", "\x1f", "\x7f", "\n", "\t", "\xc2\x80", "\xc2\x9f",
                                           "\xc2\xa0", "\xc2", " ", "\x80", "\xff"};
    char buf[64];
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        for (int len = 1; len <= 40; len++)
            for (int at = 0; at < len; at++)
                for (int keep = 0; keep <= 1; keep++) {
                    for (int i = 0; i < len; i++)
                        buf[i] = (char)(i % 5 == 4 ? 0xe9 : 'a' + i % 26);
                    buf[len] = '\0';
                    size_t sl = strlen(specials[k]);
                    if ((size_t)at + sl <= (size_t)len)
                        memcpy(buf + at, specials[k], sl);
                    long want = reference(buf, keep), got = fe_control_at(buf, keep);
                    if (got != want)
                        fail_msg("special %zu at %d of %d (keep %d): %ld, want %ld", k, at, len, keep,
                                 got, want);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table),
        cmocka_unit_test(every_offset),
    };
    return cmocka_run_group_tests_name("control", tests, NULL, NULL);
}
