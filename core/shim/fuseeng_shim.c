/* fuseeng_shim.c: placeholder translation unit until the public API lands. */
#include "fuseeng.h"
