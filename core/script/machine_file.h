/* machine_file.h: loading machine files (lua/machines/NAME.lua) in the
 * sandbox into fe_machine (core/sim/machine.h checks what they return). */
#ifndef FE_MACHINE_FILE_H
#define FE_MACHINE_FILE_H

#include "machine.h"
#include "sandbox.h"

/* Load a machine: name_or_path is a readable file, or a name looked up as
 * HOME/lua/machines/NAME.lua, either followed by overrides
 * ":FIELD=VALUE,..." (machine_file.c). The file runs in sb under its instruction
 * budget and memory cap (call fe_sandbox_set_limits first to tighten them).
 * Fills *m and returns FE_OK, or FE_EINPUT with err naming the file and the
 * field at fault. The Lua stack is left as it was. */
int fe_machine_load(fe_sandbox *sb, const char *name_or_path, fe_machine *m, fe_error *err);

/* Load a shipped machine by its name alone (overrides allowed): HOME/lua/machines/NAME.lua,
 * never a file elsewhere (for names read from files, such as a plan's
 * "machine"). FE_OK, or FE_EINPUT "no machine named 'NAME' in DIR (known
 * machines: ...)" or the file's own error. */
int fe_machine_load_shipped(fe_sandbox *sb, const char *name, fe_machine *m, fe_error *err);

#endif
