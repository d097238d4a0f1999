/* version.h: the engine's version, in one place: fe_version (core/api),
 * fuseeng.core.version (core/script/lua_core.c) and the pkg-config file
 * (the Makefile reads the line below) give it. */
#ifndef FE_VERSION_H
#define FE_VERSION_H

#define FE_VERSION "0.1.0"

#endif
