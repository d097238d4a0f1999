# install.sh: `make install PREFIX=...` gives a fuseeng that finds its Lua
# library and policies from anywhere, and a library that builds against the
# installed header through pkg-config.
. tests/lib.sh
root=$(pwd)
if ! make -s install PREFIX="$T/inst" SANITIZE="${SANITIZE:-}" >"$T/install.log" 2>&1; then
    not_ok "make install" "$(tail -5 "$T/install.log")"
    finish
    exit 1
fi
ok "make install"
(cd / && "$T/inst/bin/fuseeng" run "$root/examples/models/gpt2_block.json" --policy static_rules) \
    >"$T/out" 2>"$T/err"
if grep -q '^kernels' "$T/out"; then ok "the installed binary finds lua/ and policies/"; else
    not_ok "the installed binary finds lua/ and policies/" "$(cat "$T/err")"; fi
export PKG_CONFIG_PATH="$T/inst/lib/pkgconfig"
if cc -std=c11 -o "$T/embed" examples/embed.c $(pkg-config --cflags --libs fuseeng) \
       ${SANITIZE:+-fsanitize=address,undefined} 2>"$T/err"; then
    ok "a program builds with pkg-config fuseeng"
    # no -rpath by hand and no LD_LIBRARY_PATH: the .pc file's Libs carry it
    expect_ok "... and runs against the installed library, no rpath added by hand" 'fuse_all' \
        env -u LD_LIBRARY_PATH "$T/embed" examples/models/llama2_7b_layer.json
else
    not_ok "a program builds with pkg-config fuseeng" "$(cat "$T/err")"
fi
# A program linked with the static library, run from elsewhere with no
# FUSEENG_HOME: the prefix compiled in is where it finds lua/ and policies/.
if cc -std=c11 -o "$T/embed_static" examples/embed.c -I"$T/inst/include" "$T/inst/lib/libfuseeng.a" \
       $(pkg-config --static --libs fuseeng | sed 's/-L[^ ]*lib //; s/-lfuseeng//') \
       ${SANITIZE:+-fsanitize=address,undefined} 2>"$T/err"; then
    (cd / && env -u FUSEENG_HOME "$T/embed_static" "$root/examples/models/llama2_7b_layer.json") \
        >"$T/out" 2>"$T/err"
    if grep -q 'fuse_all' "$T/out"; then ok "a statically linked program finds the installed lua/"
    else not_ok "a statically linked program finds the installed lua/" "$(head -c 400 "$T/err")"; fi
else
    not_ok "a program links the static library" "$(head -c 400 "$T/err")"
fi
# the manual page and the bash completion
if [ -s "$T/inst/share/man/man1/fuseeng.1" ] && [ -s "$T/inst/share/bash-completion/completions/fuseeng" ]; then
    ok "make install puts the man page and the bash completion in place"
else not_ok "make install puts the man page and the bash completion in place" "$(ls -R "$T/inst/share" | head -20)"; fi
finish
