#!/usr/bin/env bash
# scripts/weak-scaling-euler.sh: Euler circuits, weak scaling over GPUs: 2^EULER_WEAK_LOG2 edges
# (default 28) per GPU on 1, 2, 4, ... ranks (one per GPU present; EULER_WEAK_RANKS overrides),
# the union of two Hamiltonian cycles and random cycles (mean length 8), adjacency and random
# pairing (EULER_WEAK_GRAPHS="union cycles", EULER_WEAK_PAIRINGS="adjacency random" choose);
# the circuit is neither written nor checked (the timed phases only). Prints one row a run as
# it finishes: per-phase seconds, edges/s, the weak-scaling efficiency against the 1-rank row
# and the bytes all ranks sent each other in each phase (MB; /euler NAME_bytes).
#     TESSERA_BIN=target/release/tessera scripts/weak-scaling-euler.sh [OUTDIR]
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
out=${1:-${EULER_WEAK_OUT:-out/weak-euler}}
log2=${EULER_WEAK_LOG2:-28}
mkdir -p "$out"
read -r -a ranks <<<"$(scaling_ranks "${EULER_WEAK_RANKS:-}")"
edges=$((1 << log2))
# One row per run as it finishes (a run cut short leaves the rows before it): per-phase
# seconds, edges/s, the efficiency against the 1-rank row, and the MB all ranks sent per phase.
row() {
    python3 - "$1" <<'PY'
import sys, os, h5py
path = sys.argv[1]
phases = ("check", "pair", "label", "tree", "splice", "rank")
name = os.path.basename(path)[:-3]
key, np_ = name.rsplit("-np", 1)
a = h5py.File(path)["euler"].attrs
solve = sum(a[p + "_seconds"] for p in phases)
try:
    b = h5py.File(f"{os.path.dirname(path)}/{key}-np1.h5")["euler"].attrs
    eff = sum(b[p + "_seconds"] for p in phases) / solve
except OSError:
    eff = float("nan")
print(f"{name:<24} {int(a['num_edges']):>11} " + " ".join(f"{a[p + '_seconds']:>7.3f}" for p in phases)
      + f" {a['edges_per_second']:>10.3e} {eff:>8.2f}   MB " + " ".join(f"{a.get(p + '_bytes', 0) / 1e6:.1f}" for p in phases), flush=True)
PY
}
echo "run                            edges   check    pair   label    tree  splice    rank    edges/s weak eff   MB sent per phase"
for graph in ${EULER_WEAK_GRAPHS:-union cycles}; do
    for pairing in ${EULER_WEAK_PAIRINGS:-adjacency random}; do
        for np in "${ranks[@]}"; do
            name="$graph-$pairing-np$np"
            if [[ $graph == union ]]; then
                args=(--generator union-cycles --vertices $((edges / 2 * np)) --k 2)
            else
                args=(--generator random-cycles --vertices $((edges / 8 * np)) --edges $((edges * np)) --k 8)
            fi
            rm -f "$out/$name.h5"
            if timeout "${EULER_WEAK_TIMEOUT:-120}" mpirun --oversubscribe --bind-to none -np "$np" "$bin" \
                euler --device "${EULER_WEAK_DEVICE:-gpu}" --write-circuit false --verify false --pairing "$pairing" \
                "${args[@]}" --output "$out/$name.h5" --force >"$out/$name.log" 2>&1; then
                row "$out/$name.h5"
            else
                echo "$name: failed or timed out (log: $out/$name.log)"
            fi
        done
    done
done
