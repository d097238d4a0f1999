/* sandbox.c: the Lua state that runs policies and machine files.
 *
 * Note on the box (after Redis's script_lua.c):
 *
 *   - Allow-list. Scripts never see the real global table. Each script gets
 *     a fresh environment built by make_env below: the safe base functions,
 *     its own copies of string/table/math/utf8/coroutine (so a script that
 *     overwrites math.max only breaks itself), print to stderr, load for
 *     text chunks only, and a require that finds only the fuseeng Lua
 *     library and the preloaded C modules (lpeg; fuseeng.core, which the
 *     engine adds with fe_sandbox_preload). No os, io,
 *     debug, package, dofile, loadfile, collectgarbage, string.dump (taken
 *     out of the real string table, which strings index through their
 *     shared metatable). Globals are strict: reading or assigning an
 *     undeclared one is an error, which catches the typos that plague
 *     short scripts.
 *   - Metatables that are shared between scripts (strings, LPeg patterns,
 *     the engine's userdata) say __metatable = false, so no script can
 *     reach them.
 *   - No finalizers. Lua runs __gc with hooks off, so a finalizer that
 *     loops would hang the engine in lua_close where nothing can stop it.
 *     Lua 5.4 marks an object for finalization only when setmetatable is
 *     given a metatable that already has __gc, so the sandbox's
 *     setmetatable (l_setmetatable) refuses such metatables, and no
 *     finalizer of a script ever exists.
 *   - Time. A count hook fires every HOOK_EVERY instructions; it counts the
 *     run's instruction budget and reads a cheap clock for its time limit
 *     (a loop of C calls, such as string.rep or pcall(error), uses few
 *     instructions but much time). The allocator also reads the clock on
 *     large allocations, so a loop of huge string.reps stops promptly.
 *     When a run is over its budget, time or memory, the hook raises an
 *     error and from then on fires on every instruction, so a pcall inside
 *     the script cannot swallow the stop: its next instruction raises
 *     again. Lua runs hooks with hooks off, so no script code may run
 *     inside the one that raises: the sandbox's xpcall and coroutine.close
 *     and coroutine.wrap see to it (see "script code the hook must keep
 *     reaching" below). A single long C call cannot be interrupted at all;
 *     for the CLI a watchdog (fe_sandbox_watchdog) ends the process then.
 *   - Memory. The allocator counts the state's bytes and refuses to grow
 *     past the cap; the refusal is reported as the cap, not as "not enough
 *     memory", and is as final as the budget.
 *   - Errors read "file:LINE: message". A message without a place (error(x,
 *     0), error(42), errors raised by C functions) gets the place of the
 *     innermost script function that was running; one with no script frame
 *     left (a stop after a tail call) is placed by the caller, which knows
 *     the hook or file it called.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <lauxlib.h>
#include <limits.h>
#include <lua-lpeg.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "home.h"
#include "infile.h"
#include "lua_pool.h"
#include "sandbox.h"

#define HOOK_EVERY 1000
/* Allocations this large read the clock: cheap next to filling them. */
#define TIMED_ALLOC (256 << 10)
/* Longer limits are taken as this (a year), which keeps deadlines in range. */
#define MAX_SECONDS (365 * 86400.0)
/* The collector's pause (percent): a cycle starts when the heap reaches
 * this much of what the last one kept. Lua's 200 makes a policy on a big
 * graph re-mark its node and tensor objects over and over; 400 halves
 * those passes. The heap still never passes the memory cap: an allocation
 * there makes Lua collect in full first (alloc), so the cap measures what
 * a script keeps whatever the pause. */
#define GC_PAUSE 400

/* Why a run is being stopped. */
enum { RUNNING, STOP_BUDGET, STOP_MEMORY, STOP_TIME };

struct fe_sandbox {
    lua_State *L;
    fe_lua_pool *pool;           /* the state's small blocks (lua_pool.h) */
    int64_t mem_used, mem_cap;
    const void *refused_ptr;     /* the allocation last refused at the cap, */
    size_t refused_size;         /* before Lua's emergency collection (0: none) */
    int64_t budget, count;
    double seconds;              /* time limit per run */
    int64_t deadline;            /* end of the current run's time, fe_clock_coarse_ns */
    int stop;                    /* RUNNING, or why the run is over */
    int depth;                   /* nesting of fe_sandbox_pcall */
    char where[300];             /* last place seen (hook, or the called function's definition) */
    char stop_msg[400];          /* "place: why", fixed when the stop is first raised */
    char script[256];            /* the run's script, for places and the watchdog */
    char libsrc[PATH_MAX + 8];   /* "@HOME/lua/": chunk names of the fuseeng library */
    int env_ref;                 /* make_env from the bootstrap */
    int preload_ref;             /* the table of preloaded C modules, by name */
    char home[PATH_MAX];
};

static void hook(lua_State *L, lua_Debug *ar);

/* Stop mode: the hook fires at every instruction and every new line of
 * thread T, so that nothing T runs after a stop goes unchecked. */
static void stop_mode(lua_State *T)
{
    lua_sethook(T, hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
}

static int in_stop_mode(lua_State *T)
{
    return (lua_gethookmask(T) & LUA_MASKLINE) != 0;
}

/* Make the hook fire at the next instruction of the main thread (a thread
 * that runs in a coroutine meets it within HOOK_EVERY instructions). */
static void stop_soon(fe_sandbox *sb, int why)
{
    if (sb->stop == RUNNING)
        sb->stop = why;
    if (sb->L)
        stop_mode(sb->L);
}

/* ---- memory ---- */

static void *alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fe_sandbox *sb = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        sb->mem_used -= (int64_t)old;
        if (ptr)
            fe_lua_pool_release(sb->pool, ptr, old);
        return NULL;
    }
    if (nsize > old && sb->mem_used + (int64_t)(nsize - old) > sb->mem_cap) {
        /* The cap is on what a script keeps, not on garbage the collector
         * has yet to reach: a first refusal lets Lua collect in full and ask
         * again (the same block and size); only that second refusal stops
         * the run. */
        if (sb->refused_ptr == ptr && sb->refused_size == nsize) {
            sb->refused_size = 0;
            stop_soon(sb, STOP_MEMORY);
        } else {
            sb->refused_ptr = ptr;
            sb->refused_size = nsize;
        }
        return NULL;
    }
    if (nsize >= old + TIMED_ALLOC && sb->stop == RUNNING && fe_clock_coarse_ns() > sb->deadline)
        stop_soon(sb, STOP_TIME);
    void *p = fe_lua_pool_realloc(sb->pool, ptr, old, nsize);
    if (p) {
        sb->mem_used += (int64_t)nsize - (int64_t)old;
        if (sb->refused_size == nsize && sb->refused_ptr == ptr)
            sb->refused_size = 0;   /* the collection made room */
    }
    return p;
}

/* ---- time ---- */

/* Raise the stop, placed where the hook first saw it. */
static int stop(lua_State *L, fe_sandbox *sb)
{
    /* From now on fire at every instruction, here and in the main thread:
     * a pcall in the script cannot hold the stop. Stop mode also marks a
     * coroutine that this raise ends (see ended_by_stop), so it is set
     * before anything here can fail. */
    stop_mode(L);
    if (L != sb->L)
        stop_mode(sb->L);
    if (!sb->stop_msg[0]) {
        const char *place = sb->where[0] ? sb->where : sb->script;
        if (sb->stop == STOP_MEMORY)
            snprintf(sb->stop_msg, sizeof sb->stop_msg,
                     "%s: memory cap of %lld MiB exceeded (raise it with --max-memory MIB)", place,
                     (long long)(sb->mem_cap >> 20));
        else if (sb->stop == STOP_TIME)
            snprintf(sb->stop_msg, sizeof sb->stop_msg, "%s: time limit of %g s exceeded (an "
                     "infinite loop, or slow calls?)", place, sb->seconds);
        else
            snprintf(sb->stop_msg, sizeof sb->stop_msg, "%s: instruction budget of %lld exceeded "
                     "(an infinite loop?)", place, (long long)sb->budget);
    }
    lua_pushstring(L, sb->stop_msg);
    return lua_error(L);
}

static void hook(lua_State *L, lua_Debug *ar)
{
    fe_sandbox *sb = fe_sandbox_of(L);
    (void)ar;
    lua_Debug d;
    if (lua_getstack(L, 0, &d) && lua_getinfo(L, "Sl", &d) && d.currentline > 0)
        snprintf(sb->where, sizeof sb->where, "%s:%d", d.short_src, d.currentline);
    if (sb->stop == RUNNING) {
        if (lua_gethookcount(L) != HOOK_EVERY) {
            /* A coroutine kept from a stopped run still has the fast hook. */
            lua_sethook(L, hook, LUA_MASKCOUNT, HOOK_EVERY);
            return;
        }
        sb->count += HOOK_EVERY;
        if (sb->count > sb->budget)
            sb->stop = STOP_BUDGET;
        else if (fe_clock_coarse_ns() > sb->deadline)
            sb->stop = STOP_TIME;
    }
    if (sb->stop != RUNNING)
        stop(L, sb);
}

/* ---- the watchdog ---- */

/* What the watchdog's signal handler may read: whether a script is
 * running now, and the message to print, written before the timer is
 * armed. Lock-free atomics are safe in a handler on any thread. */
static int watching;
static atomic_int script_running;
static char watch_msg[512];
static size_t watch_len;

static void watchdog_fired(int sig)
{
    (void)sig;
    if (!atomic_load(&script_running))
        return;   /* the run is over; the engine is doing other work */
    ssize_t w = write(STDERR_FILENO, watch_msg, watch_len);
    (void)w;
    _exit(2);
}

void fe_sandbox_watchdog(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watchdog_fired;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) == 0)
        watching = 1;
}

/* Arm the watchdog for the run that starts now: its limit plus a grace of
 * a tenth of it, between 1 and 10 s (the hook needs a moment to notice). */
static void watchdog_arm(fe_sandbox *sb)
{
    if (!watching)
        return;
    double grace = sb->seconds / 10;
    grace = grace < 1 ? 1 : grace > 10 ? 10 : grace;
    int n = snprintf(watch_msg, sizeof watch_msg, "fuseeng: %s: still inside a C call %g s past the "
                     "time limit (a string pattern?); stopping\n", sb->script, grace);
    watch_len = n < 0 ? 0 : (size_t)n < sizeof watch_msg ? (size_t)n : sizeof watch_msg - 1;
    double t = sb->seconds + grace;
    struct itimerval it = {.it_value = {.tv_sec = (time_t)t,
                                        .tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
}

void fe_sandbox_begin(fe_sandbox *sb, const char *script)
{
    if (script)
        snprintf(sb->script, sizeof sb->script, "%s", script);
    sb->count = 0;
    sb->refused_size = 0;
    sb->stop = RUNNING;
    sb->where[0] = '\0';
    sb->stop_msg[0] = '\0';
    sb->deadline = fe_clock_coarse_ns() + (int64_t)(sb->seconds * 1e9);   /* seconds <= MAX_SECONDS */
    lua_sethook(sb->L, hook, LUA_MASKCOUNT, HOOK_EVERY);
    watchdog_arm(sb);
}

int64_t fe_sandbox_used(const fe_sandbox *sb) { return sb->count; }

double fe_sandbox_seconds_left(const fe_sandbox *sb)
{
    double left = (double)(sb->deadline - fe_clock_coarse_ns()) * 1e-9;
    return left > 0 ? left : 0;
}
int64_t fe_sandbox_memory(const fe_sandbox *sb) { return sb->mem_used; }
int64_t fe_sandbox_memory_cap(const fe_sandbox *sb) { return sb->mem_cap; }
lua_State *fe_sandbox_L(fe_sandbox *sb) { return sb->L; }
const char *fe_sandbox_home(const fe_sandbox *sb) { return sb->home; }

fe_sandbox *fe_sandbox_of(lua_State *L)
{
    return *(fe_sandbox **)lua_getextraspace(L);
}

void fe_sandbox_set_limits(fe_sandbox *sb, const fe_sandbox_opts *o)
{
    if (o->instructions > 0)
        sb->budget = o->instructions;
    if (o->memory > 0)
        sb->mem_cap = o->memory;
    if (o->seconds > 0)
        sb->seconds = o->seconds < MAX_SECONDS ? o->seconds : MAX_SECONDS;
}

/* ---- loading text chunks ---- */

/* Scripts are small: a file over 64 MiB is not one. */
#define SCRIPT_MAX ((size_t)64 << 20)

/* Load text with the environment at index env_idx as its _ENV. */
static int load_text(lua_State *L, const char *src, size_t len, const char *chunkname, int env_idx)
{
    env_idx = lua_absindex(L, env_idx);
    int rc = luaL_loadbufferx(L, src, len, chunkname, "t");
    if (rc != LUA_OK)
        return rc;
    lua_pushvalue(L, env_idx);
    if (!lua_setupvalue(L, -2, 1))
        lua_pop(L, 1);
    return LUA_OK;
}

/* loadlib(path, env) for the bootstrap's require: the chunk or nil, err. */
static int l_loadlib(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    fe_error e = {0};
    size_t len;
    luaL_checktype(L, 2, LUA_TTABLE);
    char *src = fe_infile_read(path, "the module", SCRIPT_MAX, &len, &e);
    if (!src) {
        lua_pushnil(L);
        lua_pushstring(L, e.message);
        return 2;
    }
    char chunk[PATH_MAX + 1];
    fe_home_pathf(chunk, sizeof chunk, "@%s", path);
    int rc = load_text(L, src, len, chunk, 2);
    free(src);
    if (rc != LUA_OK) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    return 1;
}

/* findlib(name): path of module name in home/lua, or nil. A name
 * "policies.X" is the shipped policy home/policies/X.lua, so that a policy
 * can build on another (require "policies.static_rules"). */
static int l_findlib(lua_State *L)
{
    fe_sandbox *sb = fe_sandbox_of(L);
    const char *name = luaL_checkstring(L, 1);
    char rel[PATH_MAX], path[PATH_MAX];
    struct stat st;
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof rel - 16)
        return 0;
    if (strncmp(name, "policies.", 9) == 0) {
        const char *p = name + 9;
        if (!*p || strpbrk(p, "./\\"))
            return 0;
        if (fe_home_pathf(path, sizeof path, "%s/policies/%s.lua", sb->home, p) || stat(path, &st) != 0 ||
            !S_ISREG(st.st_mode))
            return 0;
        lua_pushstring(L, path);
        return 1;
    }
    for (size_t i = 0; i <= n; i++) {
        char c = name[i];
        if (c == '/' || c == '\\' || (c == '.' && i + 1 < n && name[i + 1] == '.'))
            return 0;   /* no paths, no "..": modules are names */
        rel[i] = c == '.' ? '/' : c;
    }
    if (fe_home_pathf(path, sizeof path, "%s/lua/%s.lua", sb->home, rel) || stat(path, &st) != 0) {
        if (fe_home_pathf(path, sizeof path, "%s/lua/%s/init.lua", sb->home, rel) || stat(path, &st) != 0)
            return 0;
    }
    lua_pushstring(L, path);
    return 1;
}

/* setmetatable(t, mt) as the base library's, but refusing a metatable
 * with __gc: finalizers run with hooks off, beyond every limit. In C, so
 * that its errors name the script's line (Lua 5.4 marks an object for
 * finalization only here, so a __gc added later never runs). */
static int l_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        int gc = lua_rawget(L, 2) != LUA_TNIL;
        lua_pop(L, 1);
        if (gc)
            return luaL_error(L, "setmetatable: metatables with __gc are not allowed (finalizers "
                              "would run outside the instruction budget and time limit)");
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* ---- script code the hook must keep reaching ----
 *
 * Lua turns hooks off while one runs (luaD_hook clears L->allowhook), and
 * the stop is raised from inside the hook. Two things would then run a
 * script's code with no hook at all, beyond the budget and the clock:
 *
 *   - A message handler. Lua calls it where the error was raised, before
 *     unwinding (luaG_errormsg), so an xpcall handler called for the stop
 *     runs inside the hook: xpcall(error, function() while true do end end)
 *     spends its budget, is called again for the stop, and loops unseen.
 *     The sandbox's xpcall (l_xpcall) calls the script's handler only
 *     while the run is live; for a stop it hands the message on as it is.
 *   - A coroutine that the stop ends. It dies inside the hook, and
 *     lua_resume, unlike a pcall, does not turn its hooks back on: the
 *     pending __close metamethods that coroutine.close and coroutine.wrap
 *     (on an error) run in it would run unhooked. The sandbox's versions
 *     (l_coclose, l_wrapped) leave such a coroutine's __close unrun.
 *
 * Everything else that runs a script's code does so with hooks on: __close
 * as a pcall unwinds (the pcall restores them first), handlers for errors
 * the script raised itself (the handler then runs where the script was,
 * and a stop inside it is the case above), __tostring called by print or
 * by msgh (which never calls it for the stop: a string), coroutines
 * resumed from anywhere (each thread has its own hook, copied from its
 * creator's). No finalizer of a script exists (l_setmetatable) and
 * collectgarbage is not given. */

/* Did a stop end thread T? The stop puts T in stop mode before raising,
 * and nothing re-arms a dead thread's hook, so this holds from then on,
 * into later runs. */
static int ended_by_stop(lua_State *T)
{
    return lua_status(T) != LUA_OK && lua_status(T) != LUA_YIELD && in_stop_mode(T);
}

static const char ENDED_BY_STOP[] = "the coroutine was ended by the sandbox's limits (instruction "
                                    "budget, time or memory); its pending __close metamethods do "
                                    "not run";

/* The message handler of l_xpcall, the script's handler its upvalue. */
static int xpcall_handler(lua_State *L)
{
    if (fe_sandbox_of(L)->stop != RUNNING)
        return 1;   /* called for the stop, inside the hook: no script code here */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* What xpcall returns: true and the results, or false and the handled
 * error (also the continuation after a yield inside it). */
static int xpcall_results(lua_State *L, int status, lua_KContext base)
{
    if (status == LUA_OK || status == LUA_YIELD)
        return lua_gettop(L) - (int)base;   /* true, results */
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
}

/* xpcall(f, handler, ...): the base library's, but with the handler run
 * through xpcall_handler. Yields cross it as they cross pcall. */
static int l_xpcall(lua_State *L)
{
    int nargs = lua_gettop(L) - 2;   /* f, handler, args... */
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, xpcall_handler, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);             /* f, handler, true, f, args... */
    int status = lua_pcallk(L, nargs, LUA_MULTRET, 2, 2, xpcall_results);
    return xpcall_results(L, status, 2);
}

/* coroutine.close(co): the library's, but a coroutine that a stop ended is
 * not closed: false and why. */
static int l_coclose(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    if (co && ended_by_stop(co)) {
        lua_pushboolean(L, 0);
        lua_pushstring(L, ENDED_BY_STOP);
        return 2;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* A function made by l_cowrap: resume its coroutine (upvalue 2) with the
 * library's resume (upvalue 1) and give the results; on an error, close
 * the coroutine with the library's close (upvalue 3: its __close
 * metamethods run) unless a stop ended it, and raise the error, a string
 * with the caller's place in front, as the library's wrap does. */
static int l_wrapped(lua_State *L)
{
    lua_State *co = lua_tothread(L, lua_upvalueindex(2));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_rotate(L, 1, 2);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    if (lua_toboolean(L, 1))
        return lua_gettop(L) - 1;
    lua_settop(L, 2);
    if (lua_status(co) != LUA_OK && lua_status(co) != LUA_YIELD && !ended_by_stop(co)) {
        lua_pushvalue(L, lua_upvalueindex(3));   /* the library's close */
        lua_pushvalue(L, lua_upvalueindex(2));
        lua_call(L, 1, 2);
        if (!lua_toboolean(L, -2))
            lua_replace(L, 2);   /* the error, or the one a __close raised */
        lua_settop(L, 2);
    }
    if (lua_type(L, 2) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, 2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

/* coroutine.wrap(f): a coroutine made by the library's create (upvalue 1),
 * called through l_wrapped. */
static int l_cowrap(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    lua_pushvalue(L, lua_upvalueindex(2));   /* resume */
    lua_insert(L, -2);
    lua_pushvalue(L, lua_upvalueindex(3));   /* close */
    lua_pushcclosure(L, l_wrapped, 3);
    return 1;
}

static int l_print(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    /* A policy's print reaches the terminal: lines kept, escapes shown. */
    char *shown = fe_escape_dup(lua_tostring(L, -1), 1);
    if (!shown)
        return luaL_error(L, "print: out of memory");
    fprintf(stderr, "%s\n", shown);
    free(shown);
    return 0;
}

/* The bootstrap runs once with the full libraries and returns make_env.
 * Everything scripts get is captured here; the real _G stays out of reach. */
static const char bootstrap[] =
    "local loadlib, findlib, print, preload, safe_setmetatable = ...\n"
    "local load, setmetatable, error, type, pairs, tostring = load, setmetatable, error, type, pairs, tostring\n"
    "local base = {setmetatable = safe_setmetatable}\n"
    "for _, k in ipairs{'assert','error','ipairs','next','pairs','pcall','select','tonumber',\n"
    "  'tostring','type','xpcall','rawequal','rawlen','rawget','rawset',\n"
    "  'getmetatable','_VERSION'} do base[k] = _G[k] end\n"
    "local libs = {string = string, table = table, math = math, utf8 = utf8, coroutine = coroutine}\n"
    "local function copy(t) local c = {} for k, v in pairs(t) do c[k] = v end return c end\n"
    "local strict = {\n"
    "  __index = function(_, k) error(\"undefined global '\" .. tostring(k) .. \"'\", 2) end,\n"
    "  __newindex = function(_, k) error(\"assignment to undeclared global '\" .. tostring(k) ..\n"
    "    \"' (declare it local)\", 2) end,\n"
    "  __metatable = false }\n"
    "local make_env\n"
    "make_env = function(loaded)\n"
    "  loaded = loaded or {}\n"
    "  local env = {}\n"
    "  for k, v in pairs(base) do env[k] = v end\n"
    "  for k, v in pairs(libs) do env[k] = copy(v) end\n"
    "  env.unpack = table.unpack\n"
    "  env.print = print\n"
    "  env._G = env\n"
    "  env.load = function(chunk, name, mode, e)\n"
    "    return load(chunk, name, 't', e == nil and env or e)\n"
    "  end\n"
    "  env.require = function(name)\n"
    "    if type(name) ~= 'string' then error('require expects a module name', 2) end\n"
    "    local m = loaded[name]\n"
    "    if m ~= nil then return m end\n"
    "    if preload[name] then m = copy(preload[name]) else\n"
    "      local path = findlib(name)\n"
    "      if not path then error(\"module '\" .. name .. \"' not found (scripts may require \" ..\n"
    "        \"the fuseeng library, policies.NAME, lpeg and fuseeng.core only)\", 2) end\n"
    "      local f, err = loadlib(path, make_env(loaded))\n"
    "      if not f then error(err, 0) end\n"
    "      m = f(name)\n"
    "      if m == nil then m = true end\n"
    "    end\n"
    "    loaded[name] = m\n"
    "    return m\n"
    "  end\n"
    "  return setmetatable(env, strict)\n"
    "end\n"
    "return make_env\n";

static int lock_metatable(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    return 1;
}

fe_sandbox *fe_sandbox_new(const fe_sandbox_opts *opts, fe_error *err)
{
    fe_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating a Lua state");
        return NULL;
    }
    sb->budget = FE_SANDBOX_INSTRUCTIONS;
    sb->mem_cap = FE_SANDBOX_MEMORY;
    sb->seconds = FE_SANDBOX_SECONDS;
    if (opts)
        fe_sandbox_set_limits(sb, opts);
    sb->deadline = INT64_MAX;   /* no run yet */
    snprintf(sb->script, sizeof sb->script, "script");
    if (fe_home_locate(opts ? opts->home : NULL, sb->home, sizeof sb->home) != 0) {
        fe_error_set(err, FE_ERUNTIME, "cannot find the fuseeng Lua library (lua/fuseeng.lua): "
                     "set FUSEENG_HOME to the directory that holds lua/ and policies/");
        free(sb);
        return NULL;
    }
    fe_home_pathf(sb->libsrc, sizeof sb->libsrc, "@%s/lua/", sb->home);
    sb->pool = fe_lua_pool_new();
    lua_State *L = sb->pool ? lua_newstate(alloc, sb) : NULL;
    if (!L) {
        fe_error_set(err, FE_ENOMEM, "out of memory creating a Lua state");
        fe_lua_pool_free(sb->pool);
        free(sb);
        return NULL;
    }
    sb->L = L;
    *(fe_sandbox **)lua_getextraspace(L) = sb;
    lua_gc(L, LUA_GCINC, GC_PAUSE, 0, 0);

    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine}, {NULL, NULL},
    };
    for (const luaL_Reg *l = libs; l->func; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    /* Scripts share the string metatable: lock it. Its __index is the real
     * string table, so ("").dump would reach string.dump: remove it there
     * (the scripts' copies are made from this table). */
    lua_pushliteral(L, "");
    lock_metatable(L, -1);
    lua_pop(L, 1);
    lua_getglobal(L, LUA_STRLIBNAME);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    /* The xpcall, coroutine.close and coroutine.wrap that keep a script's
     * code under the hook (l_xpcall, l_coclose, l_cowrap), put in the real
     * tables, from which the scripts' copies are made. */
    lua_pushcfunction(L, l_xpcall);
    lua_setglobal(L, "xpcall");
    lua_getglobal(L, LUA_COLIBNAME);
    lua_getfield(L, -1, "close");
    lua_pushcclosure(L, l_coclose, 1);
    lua_getfield(L, -2, "create");
    lua_getfield(L, -3, "resume");
    lua_getfield(L, -4, "close");
    lua_pushcclosure(L, l_cowrap, 3);
    lua_setfield(L, -3, "wrap");
    lua_setfield(L, -2, "close");
    lua_pop(L, 1);
    /* Seed the generator: same inputs, same plans. */
    lua_getglobal(L, "math");
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, 42);
    lua_call(L, 1, 0);
    lua_pop(L, 1);

    if (luaL_loadbufferx(L, bootstrap, sizeof bootstrap - 1, "=bootstrap", "t") != LUA_OK) {
        fe_error_set(err, FE_ERUNTIME, "sandbox bootstrap: %s", lua_tostring(L, -1));
        fe_sandbox_free(sb);
        return NULL;
    }
    lua_pushcfunction(L, l_loadlib);
    lua_pushcfunction(L, l_findlib);
    lua_pushcfunction(L, l_print);
    lua_newtable(L);   /* preload: C modules, opened once, copied per script */
    /* Openers may leave more than their result on the stack: call them. */
    lua_pushcfunction(L, luaopen_lpeg);
    lua_call(L, 0, 1);
    lua_getfield(L, -1, "P");   /* lock the pattern metatable through any pattern */
    lua_pushliteral(L, "");
    lua_call(L, 1, 1);
    lock_metatable(L, -1);
    lua_pop(L, 1);
    lua_setfield(L, -2, "lpeg");
    lua_pushvalue(L, -1);
    sb->preload_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushcfunction(L, l_setmetatable);
    if (lua_pcall(L, 5, 1, 0) != LUA_OK) {
        fe_error_set(err, FE_ERUNTIME, "sandbox bootstrap: %s", lua_tostring(L, -1));
        fe_sandbox_free(sb);
        return NULL;
    }
    sb->env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    fe_sandbox_begin(sb, NULL);
    return sb;
}

void fe_sandbox_preload(fe_sandbox *sb, const luaL_Reg *modules)
{
    lua_State *L = sb->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, sb->preload_ref);
    /* Openers may leave more than their result on the stack: call them. */
    for (const luaL_Reg *m = modules; m->name; m++) {
        lua_pushcfunction(L, m->func);
        lua_call(L, 0, 1);
        lua_setfield(L, -2, m->name);
    }
    lua_pop(L, 1);
}

void fe_sandbox_free(fe_sandbox *sb)
{
    if (!sb)
        return;
    if (sb->L)
        lua_close(sb->L);
    fe_lua_pool_free(sb->pool);   /* after the close, which gives every block back */
    free(sb);
}

void fe_sandbox_push_env(fe_sandbox *sb)
{
    lua_State *L = sb->L;
    /* A new script starts a new metered run; a run stopped by the budget or
     * the cap must not make this (trusted) call fail. */
    fe_sandbox_begin(sb, NULL);
    lua_rawgeti(L, LUA_REGISTRYINDEX, sb->env_ref);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        /* Only an allocation failure can get here: give an empty, closed
         * environment, in which the script fails with a clear message. */
        lua_pop(L, 1);
        lua_newtable(L);
    }
}

/* ---- places ---- */

/* Length of the place msg starts with, "chunk:LINE: ", or 0. The chunk
 * name is what comes before the first ':' of the first line. */
static size_t place_len(const char *msg)
{
    const char *c = strchr(msg, ':');
    if (!c || c == msg || memchr(msg, '\n', (size_t)(c - msg)))
        return 0;
    const char *d = c + 1;
    if (!isdigit((unsigned char)*d))
        return 0;
    while (isdigit((unsigned char)*d))
        d++;
    return d[0] == ':' && d[1] == ' ' ? (size_t)(d + 2 - msg) : 0;
}

int fe_sandbox_has_place(const char *msg)
{
    return place_len(msg) > 0;
}

/* Is source (a chunk name) the fuseeng library's own code? */
static int is_library(const fe_sandbox *sb, const char *source)
{
    return strncmp(source, sb->libsrc, strlen(sb->libsrc)) == 0;
}

int fe_sandbox_fn_place(lua_State *L, int idx, char *buf, size_t size)
{
    fe_sandbox *sb = fe_sandbox_of(L);
    lua_Debug d;
    if (lua_type(L, idx) != LUA_TFUNCTION)
        return 0;
    lua_pushvalue(L, idx);
    if (!lua_getinfo(L, ">S", &d) || d.what[0] == 'C' || is_library(sb, d.source))
        return 0;
    if (d.linedefined > 0)
        snprintf(buf, size, "%s:%d", d.short_src, d.linedefined);
    else
        snprintf(buf, size, "%s", d.short_src);   /* a main chunk */
    return 1;
}

/* ---- running ---- */

/* Message handler: every message gets a place. One that has a place keeps
 * it (once: coroutine.wrap prefixes a second copy of it to errors that
 * cross it). Others (error(msg, 0), error(42), a level that points at C,
 * errors raised by C functions such as coroutine.yield) get the place of
 * the innermost function of a script that is running, which is where the
 * script was when it failed. Library code is skipped: a message about a
 * script's mistake should name the script. Error objects that are not
 * strings are described. */
static int msgh(lua_State *L)
{
    fe_sandbox *sb = fe_sandbox_of(L);
    const char *msg;
    if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER)
        msg = lua_tostring(L, 1);
    else if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
        msg = lua_tostring(L, -1);
    else
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    size_t n = place_len(msg);
    if (n) {
        while (strncmp(msg, msg + n, n) == 0)
            msg += n;
        lua_pushstring(L, msg);
        return 1;
    }
    lua_Debug d;
    for (int level = 1; lua_getstack(L, level, &d); level++) {
        if (lua_getinfo(L, "Sl", &d) && d.currentline > 0 && !is_library(sb, d.source)) {
            lua_pushfstring(L, "%s:%d: %s", d.short_src, d.currentline, msg);
            return 1;
        }
    }
    lua_pushstring(L, msg);
    return 1;
}

/* Why the run was stopped, as "place: why" (formatted once). */
static const char *stop_message(fe_sandbox *sb)
{
    if (!sb->stop_msg[0]) {
        /* stop() formats it; a memory refusal that ended the call before
         * the hook ran has not. */
        const char *place = sb->where[0] ? sb->where : sb->script;
        snprintf(sb->stop_msg, sizeof sb->stop_msg,
                 "%s: memory cap of %lld MiB exceeded (raise it with --max-memory MIB)", place,
                 (long long)(sb->mem_cap >> 20));
        if (sb->stop == STOP_TIME)
            snprintf(sb->stop_msg, sizeof sb->stop_msg, "%s: time limit of %g s exceeded", place,
                     sb->seconds);
    }
    return sb->stop_msg;
}

int fe_sandbox_pcall(fe_sandbox *sb, int nargs, int nresults, const char *what, fe_error *err)
{
    lua_State *L = sb->L;
    int fn = lua_gettop(L) - nargs;
    if (sb->depth++ == 0) {
        sb->where[0] = '\0';   /* nothing seen yet in this call */
        if (watching)
            atomic_store(&script_running, 1);
    }
    /* Below the call: a copy of the function (to place a memory error that
     * came before the hook saw a line) and the message handler. */
    lua_pushvalue(L, fn);
    lua_pushcfunction(L, msgh);
    lua_rotate(L, fn, 2);
    int rc = lua_pcall(L, nargs, nresults, fn + 1);
    if (--sb->depth == 0 && watching)
        atomic_store(&script_running, 0);
    if (rc == LUA_OK && sb->stop == RUNNING) {
        lua_remove(L, fn + 1);
        lua_remove(L, fn);
        return FE_OK;
    }
    if (!sb->where[0])
        fe_sandbox_fn_place(L, fn, sb->where, sizeof sb->where);
    if (rc == LUA_ERRMEM && sb->stop == RUNNING && sb->refused_size) {
        sb->refused_size = 0;   /* refused at the cap where Lua could not collect and retry */
        sb->stop = STOP_MEMORY;
    }
    if (sb->stop != RUNNING) {
        /* Budget, time or memory: the same message however the script's
         * own pcalls and handlers dressed the error on its way out. */
        fe_error_set(err, FE_EINPUT, "%s", stop_message(sb));
    } else if (rc == LUA_ERRMEM) {
        fe_error_set(err, FE_EINPUT, "%s: out of memory",
                     sb->where[0] ? sb->where : sb->script[0] ? sb->script : what);
    } else {
        const char *msg = lua_tostring(L, -1);
        fe_error_set(err, FE_EINPUT, "%s", msg ? msg : "(error without a message)");
    }
    lua_settop(L, fn - 1);
    return FE_EINPUT;
}

int fe_sandbox_load_string(fe_sandbox *sb, const char *src, size_t len, const char *label,
                           fe_error *err)
{
    lua_State *L = sb->L;
    char chunk[PATH_MAX + 1];
    fe_home_pathf(chunk, sizeof chunk, "@%s", label ? label : "script");
    if (len >= 4 && memcmp(src, LUA_SIGNATURE, 4) == 0) {
        lua_pop(L, 1);
        return fe_error_set(err, FE_EINPUT, "%s: binary (precompiled) chunks are not accepted; "
                            "give the Lua source", label ? label : "script");
    }
    int rc = load_text(L, src, len, chunk, -1);
    lua_remove(L, -2);   /* the environment */
    if (rc != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fe_error_set(err, FE_EINPUT, "%s", msg ? msg : "syntax error");
        lua_pop(L, 1);
        return FE_EINPUT;
    }
    return FE_OK;
}

int fe_sandbox_load_file(fe_sandbox *sb, const char *path, const char *what, fe_error *err)
{
    size_t len;
    char *src = fe_infile_read(path, what, SCRIPT_MAX, &len, err);
    if (!src) {
        lua_pop(sb->L, 1);
        return FE_EINPUT;
    }
    int rc = fe_sandbox_load_string(sb, src, len, path, err);
    free(src);
    return rc;
}

const char *fe_sandbox_describe(lua_State *L, int idx)
{
    static _Thread_local char buf[96];
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        snprintf(buf, sizeof buf, "%.60s", lua_tostring(L, idx));
        return buf;
    case LUA_TSTRING:
        snprintf(buf, sizeof buf, "'%.60s'", lua_tostring(L, idx));
        return buf;
    case LUA_TBOOLEAN:
        return lua_toboolean(L, idx) ? "true" : "false";
    default:
        snprintf(buf, sizeof buf, "a %s", luaL_typename(L, idx));
        return buf;
    }
}
