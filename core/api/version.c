/* version.c: the library version. */
#include "fuseeng.h"

const char *fe_version(void)
{
    return "0.1.0";
}
