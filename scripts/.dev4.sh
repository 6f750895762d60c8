#!/usr/bin/env bash
set -u
source scripts/lib.sh
md5sum target/release/tessera
nvidia-smi -L
TESSERA_BIN=target/release/tessera GPU_CHECK_OUT=/tmp/gc GPU_CHECK_PARTS="euler" timeout 400 scripts/gpu-check > $OUT/gc-euler.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/gc-euler.txt
for f in /tmp/gc/euler-*-gpu.log; do echo "== $f"; grep -E "took|rror|checksum|initial" $f | head -12; done > $OUT/gpu-logs.txt 2>&1
