#!/usr/bin/env bash
# scripts/weak-scaling-labels.sh: weak scaling of the two labellings on 1, 2, 4, ... GPUs (the
# GPUs present, or $WS_COUNTS), one rank per GPU, the same work per GPU:
# - cc on a Kronecker graph of SCALE $WS_SCALE (26) per GPU (SCALE 26 + log2 P in all);
# - cc on G(n, m) with n = 2^$WS_SCALE per GPU and m = 2n;
# - BFS (1D, `--validate false`, $WS_ROOTS (16) roots) on the Kronecker graph of the cc rows:
#   the cc time beside the search time on the same graph and GPUs (issue 31: cc should cost no
#   more than two searches);
# - percolation labelling, 2D site at p_c = 0.5927, $WS_L^2 (32768^2) sites per GPU as a strip:
#   L_0 x L = ($WS_L P) x $WS_L, each slab $WS_L x $WS_L, so the plane the slabs meet at (and
#   the boundary merge's work per step) stays the same at every P.
# cc rows: rounds, bytes sent per rank (all rounds, mean over ranks), the labelling's median
# seconds over $WS_TRIALS (3) trials and its phases (local union-find, refresh, absorb, hook,
# shortcut, relabel; the last trial's, rank 0; where the binary writes them, `link`, the slowest
# rank's local union-find, and `giants`, rank 0's part of local after its own union-find), and
# the weak-scaling efficiency t(1)/t(P).
# Percolation rows: the median labelling seconds over $WS_SAMPLES (5) samples (and per site),
# the boundary merge's seconds and the most bytes one rank received in it, the cost model's bound
# (lattice::merge::merge_cost: 2 ceil(log2 P) steps, ceil(log2 P) (3 + 10 L^(d-1)) words at
# rank 0 in 2D), and the efficiency. Graph build and split are outside the timed labelling.
# BFS rows: levels (mean over the searches), the busiest rank's MB sent per search, the median
# search seconds, its efficiency, and cc/BFS: the Kronecker cc seconds over the search's.
# Runs with --verify false; `scripts/gpu-check` checks the labels. The runs go Kronecker cc,
# BFS, G(n, m), percolation, each on 1, 2, 4 GPUs, within a time budget of $WS_BUDGET (100) s:
# a run that would pass it is stopped and the rest skipped, said so in the table (graph build
# and the host split take most of a cc run's wall time: about 20 s at SCALE 26 on one GPU).
#
# Environment: TESSERA_BIN (target/release/tessera), WS_OUT (out/weak-scaling-labels),
# WS_COUNTS, WS_SCALE, WS_L, WS_TRIALS, WS_SAMPLES, WS_ROOTS, WS_PARTS ("kron bfs gnm
# percolation"), WS_BUDGET.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
out=${WS_OUT:-out/weak-scaling-labels}
scale=${WS_SCALE:-26}
side=${WS_L:-32768}
trials=${WS_TRIALS:-3}
samples=${WS_SAMPLES:-5}
roots=${WS_ROOTS:-16}
budget=${WS_BUDGET:-100}
read -r -a parts <<<"${WS_PARTS:-kron bfs gnm percolation}"
[[ -x $bin ]] || { echo "error: no binary at $bin (build with cargo build --release)" >&2; exit 1; }
(($(gpus_present) > 0)) || die "nvidia-smi lists no GPU"
read -r -a counts <<<"$(scaling_ranks "${WS_COUNTS:-}")"
mkdir -p "$out"
status=0
runs=()
# run NAME NP ARGS...: tessera ARGS on NP ranks, the result in $out/NAME.h5, stopped at the
# time budget.
run() {
    local name=$1 np=$2 left=$((budget - SECONDS))
    shift 2
    rm -f "$out/$name.h5"
    if ((left < 5)); then
        echo "skipped: $name (time budget of $budget s spent)"
        return
    fi
    if timeout "$left" mpirun --oversubscribe --bind-to none -np "$np" "$bin" "$@" --device gpu \
        --output "$out/$name.h5" >"$out/$name.log" 2>&1; then
        runs+=("$name:$np")
    elif (($? == 124)); then
        echo "stopped: $name (time budget of $budget s)"
    else
        echo "FAILED: $name (log: $out/$name.log)"
        tail -3 "$out/$name.log"
        status=1
    fi
}
cc_args=(--trials "$trials" --verify false --write-labels false)
for part in "${parts[@]}"; do
    for np in "${counts[@]}"; do
        n=$(((1 << scale) * np))
        case $part in
        percolation)
            run "percolation-np$np" "$np" percolation --lattice 2d --kind site \
                --length $((side * np)) --l "$side" --p 0.5927 --samples "$samples"
            ;;
        kron) run "kron-np$np" "$np" cc --scale $((scale + $(log2_ceil "$np"))) "${cc_args[@]}" ;;
        bfs)
            run "bfs-np$np" "$np" bfs --scale $((scale + $(log2_ceil "$np"))) --roots "$roots" \
                --validate false
            ;;
        gnm)
            run "gnm-np$np" "$np" cc --generator erdos-renyi --vertices "$n" --edges $((2 * n)) \
                "${cc_args[@]}"
            ;;
        esac
    done
done
python3 - "$out" "${runs[@]}" <<'PY' || status=1
import math, sys, h5py, numpy as np
out, runs = sys.argv[1], sys.argv[2:]
base, cc_seconds = {}, {}
print(f"{'run':<18} {'gpus':>4} {'rounds':>6} {'MB/rank':>9} {'s':>9} {'eff':>5}  phases (s)")
for run in runs:
    name, np_ = run.split(":")
    ranks = int(np_)
    kind = name.rsplit("-np", 1)[0]
    with h5py.File(f"{out}/{name}.h5") as f:
        if kind == "percolation":
            s = f["percolation"]
            l = int(s.attrs["l"])
            t = float(np.median(s["label_seconds"][:]))
            ns = t / int(s.attrs["sites"]) * 1e9
            merge_s = float(np.median(s["merge_seconds"][:]))
            merge_mb = float(np.max(s["merge_bytes"][:])) / 1e6
            levels = math.ceil(math.log2(ranks)) if ranks > 1 else 0
            model_mb = levels * (3 + 10 * l) * 8 / 1e6
            base.setdefault(kind, t)
            join = ""
            if "merge_join_seconds" in s and levels:
                # The joins' own work on the busiest rank (rank 0: one join a level), per
                # level and per site of the plane: the cost model's c.
                j = float(np.median(s["merge_join_seconds"][:]))
                join = f", joins {j:.5f} s ({j / levels / l * 1e9:.1f} ns per plane site a level)"
            print(f"{name:<18} {ranks:>4} {2 * levels:>6} {merge_mb:>9.3f} {t:>9.4f} {base[kind] / t:>5.2f}"
                  f"  {ns:.4f} ns/site; merge {merge_s:.5f} s (slowest rank, waits included){join},"
                  f" model bound {model_mb:.3f} MB")
        elif kind == "bfs":
            b = f["bfs"]
            t = float(np.median(b["time"][:]))
            levels = float(np.mean(b["num_levels"][:]))
            mb = float(b.attrs["bytes_sent_per_rank_per_search"]) / 1e6
            base.setdefault(kind, t)
            cc = cc_seconds.get(ranks)
            ratio = f"cc/bfs {cc / t:.2f}" if cc else "cc/bfs -"
            print(f"{name:<18} {ranks:>4} {levels:>6.1f} {mb:>9.1f} {t:>9.4f} {base[kind] / t:>5.2f}"
                  f"  {ratio} (median search of {len(b['time'])}, --validate false;"
                  f" {float(b.attrs['bfs  harmonic_mean_TEPS']):.3e} TEPS)")
        else:
            c = f["cc"]
            t = float(c.attrs["cc_seconds"])
            mb = float(np.sum(c["rounds/bytes"][:])) / ranks / 1e6
            rounds = len(c["rounds/changed"])
            base.setdefault(kind, t)
            if kind == "kron":
                cc_seconds[ranks] = t
            ph = " ".join(f"{p}={float(c.attrs[p + '_seconds']):.4f}"
                          for p in ["local", "link", "giants", "giants_find", "giants_probe", "giants_skip",
                                    "giants_relabel", "refresh", "absorb", "hook", "shortcut", "relabel"]
                          if p + "_seconds" in c.attrs)
            print(f"{name:<18} {ranks:>4} {rounds:>6} {mb:>9.1f} {t:>9.4f} {base[kind] / t:>5.2f}  {ph}"
                  f"  ({float(c.attrs['edges_per_second']):.3e} edges/s)")
PY
exit $status
