#!/usr/bin/env bash
set -u
source scripts/lib.sh
ensure_nccl_visible
md5sum target/release/tessera
nvidia-smi -L
B=target/release/tessera
M="mpirun --oversubscribe --bind-to none"
TESSERA_BIN=$B GPU_CHECK_OUT=/tmp/gc GPU_CHECK_PARTS="bfs" timeout 300 scripts/gpu-check > $OUT/gc-bfs.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/gc-bfs.txt
cp /tmp/gc/*.log $OUT/ 2>/dev/null
for p in 1d 2d; do
  timeout 200 $M -np 1 $B bfs --scale 26 --device gpu --roots 64 --validate false --partition $p --output /tmp/s26-$p.h5 > $OUT/s26-$p.txt 2>&1; echo "rc=$?" >> $OUT/s26-$p.txt
done
