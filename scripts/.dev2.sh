#!/usr/bin/env bash
set -u
source scripts/lib.sh
ensure_nccl_visible
md5sum target/release/tessera
nvidia-smi -L
B=target/release/tessera
M="mpirun --oversubscribe --bind-to none"
TESSERA_BIN=$B GPU_CHECK_OUT=/tmp/gc GPU_CHECK_SCALES="16" GPU_CHECK_PARTS="bfs" timeout 300 scripts/gpu-check > $OUT/gc-bfs.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/gc-bfs.txt
mkdir -p /tmp/b
bench() { # NAME NP SCALE FLAGS
  local name=$1 np=$2 scale=$3; shift 3
  timeout 200 $M -np $np $B bfs --scale $scale --device gpu --roots 64 --validate false --output /tmp/b/$name.h5 "$@" > /tmp/b/$name.txt 2>&1; echo "rc=$?" >> /tmp/b/$name.txt
  echo "== $name"; grep -E "harmonic_mean_TEPS|median_time|rc=|rror" /tmp/b/$name.txt
}
bench 1d-s26-np1 1 26
bench 2d-s26-1x1 1 26 --partition 2d
bench 1d-s27-np2 2 27
bench 2d-s27-1x2 2 27 --partition 2d --grid 1,2
bench 2d-s27-2x1 2 27 --partition 2d --grid 2,1
tar czf $OUT/bench.tgz -C /tmp/b .
