# layers.sh: the source tree keeps its architecture (tests/tools/layers.lua):
# layers include downwards only, the CLI only the public header, no include
# circles, no oversized files.
lua5.4 tests/tools/layers.lua .
