#!/usr/bin/env bash
set -u
source scripts/lib.sh
ensure_nccl_visible
md5sum target/release/tessera
nvidia-smi -L
TESSERA_BIN=target/release/tessera BENCH_WEAK=1 BENCH_NP="1 2" BENCH_MODES=hybrid BENCH_PARTITIONS="1d 2d 2d:2x1" BENCH_REPEAT=2 BENCH_LEVELS=1 \
  timeout 560 scripts/bench inputs/bench/gpu-weak-s26.toml > $OUT/bench.txt 2>&1
echo "bench rc=$?" >> $OUT/bench.txt
