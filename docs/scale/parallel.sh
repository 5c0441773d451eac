#!/bin/sh
# A sharded ctxsim comparison on one big machine with GNU parallel: N shards
# at once, each a separate process with its own memory, then one merge. Run
# from the directory holding logs/; outputs go to out/.
#
# Each shard replays on 1 core (-j 1) so N shards fill N cores; a shard's
# memory is its own tenants', so N can go as high as memory allows.
# cmd/ctxsim/scale_test.go checks the ctxsim command lines against the CLI.
set -eu
N=${N:-8}
seq 1 "$N" | parallel --halt now,fail=1 \
  ctxsim compare --trace logs/ --seed 1 -j 1 --shard "{}/$N" --out "out/shard-{}"
ctxsim merge out/shard-* --out out/merged > out/table.txt
