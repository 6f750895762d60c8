#!/usr/bin/env bash
# scripts/weak-scaling-euler.sh: Euler circuits, weak scaling over GPUs: 2^EULER_WEAK_LOG2 edges
# (default 28) per GPU on 1, 2, 4, ... ranks (one per GPU present; EULER_WEAK_RANKS overrides),
# the union of two Hamiltonian cycles and random cycles (mean length 8), adjacency and random
# pairing; the circuit is neither written nor checked (the timed phases only). Prints one row a
# run: per-phase seconds, edges/s and the weak-scaling efficiency against the 1-rank row.
# Then the bytes all ranks sent each other in each phase (MB; /euler NAME_bytes).
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
for graph in union cycles; do
    for pairing in adjacency random; do
        for np in "${ranks[@]}"; do
            name="$graph-$pairing-np$np"
            if [[ $graph == union ]]; then
                args=(--generator union-cycles --vertices $((edges / 2 * np)) --k 2)
            else
                args=(--generator random-cycles --vertices $((edges / 8 * np)) --edges $((edges * np)) --k 8)
            fi
            timeout "${EULER_WEAK_TIMEOUT:-120}" mpirun --oversubscribe --bind-to none -np "$np" "$bin" \
                euler --device "${EULER_WEAK_DEVICE:-gpu}" --write-circuit false --verify false --pairing "$pairing" \
                "${args[@]}" --output "$out/$name.h5" --force >"$out/$name.log" 2>&1 ||
                echo "$name: failed or timed out (log: $out/$name.log)"
        done
    done
done
python3 - "$out" <<'PY'
import sys, glob, os, h5py
out = sys.argv[1]
phases = ("check", "pair", "label", "tree", "splice", "rank")
print(f"{'run':<24} {'edges':>11} " + " ".join(f"{p:>7}" for p in phases) + f" {'edges/s':>10} {'weak eff':>8}")
base, moved = {}, []
for path in sorted(glob.glob(f"{out}/*.h5"), key=lambda p: (p.rsplit('-np', 1)[0], int(p.rsplit('-np', 1)[1][:-3]))):
    name = os.path.basename(path)[:-3]
    a = h5py.File(path)["euler"].attrs
    key, np_ = name.rsplit("-np", 1)
    solve = sum(a[p + "_seconds"] for p in phases)
    base.setdefault(key, solve) if np_ == "1" else None
    eff = base[key] / solve if key in base else float("nan")
    print(f"{name:<24} {int(a['num_edges']):>11} " + " ".join(f"{a[p + '_seconds']:>7.3f}" for p in phases)
          + f" {a['edges_per_second']:>10.3e} {eff:>8.2f}")
    moved.append(f"{name:<24} {'MB sent':>11} " + " ".join(f"{a.get(p + '_bytes', 0) / 1e6:>7.1f}" for p in phases))
print("\n".join(moved))
PY
