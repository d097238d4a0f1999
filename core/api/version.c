/* version.c: the library version (core/ir/version.h). */
#include "fuseeng.h"
#include "version.h"

const char *fe_version(void)
{
    return FE_VERSION;
}
