#!/usr/bin/env bash
# scripts/scaling-bc.sh: betweenness (`tessera bc`, Kronecker, BC_SCALING_SOURCES sources, default
# 64) over GPUs, one rank per GPU on 1, 2, 4, ... ranks (those the host has; BC_SCALING_RANKS
# overrides):
# - strong scaling of the full graph (`replicate = full`): SCALE BC_SCALING_SCALE (default 22)
#   at every rank count, sources split; efficiency = T(1) / (P · T(P)). A batch costs its row
#   reads more than its lanes, so 64 sources on P ranks (batches of 64/P lanes) cannot scale:
#   BC_SCALING_SOURCES=256 gives 4 ranks a full batch each;
# - weak scaling of the 1D partition (`replicate = distributed`): SCALE + log2 P, each rank
#   sweeping every source over its part, σ and δ of its ghosts exchanged per level (NCCL,
#   or BC_SCALING_TRANSPORT); efficiency = (rate(P) / P) / rate(1), rate = arcs · sources / s.
# Each row: BC seconds, the sweeps (median over BC_SCALING_REPEAT runs, default 1), and the
# set-up before the first batch apart from them (the rows' view and upload, the NCCL communicator),
# arcs · sources / s, efficiency, and the bytes each rank sent the others in the sweeps (mean
# over ranks).
#     TESSERA_BIN=target/release/tessera scripts/scaling-bc.sh [OUTDIR]
set -uo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
out=${1:-${BC_SCALING_OUT:-out/scaling-bc}}
scale=${BC_SCALING_SCALE:-22}
repeat=${BC_SCALING_REPEAT:-1}
mkdir -p "$out"
read -r -a ranks <<<"$(scaling_ranks "${BC_SCALING_RANKS:-}")"
for np in "${ranks[@]}"; do
    for kind in strong weak; do
        if [[ $kind == strong ]]; then
            s=$scale replicate=full
        else
            s=$((scale + $(log2_ceil "$np"))) replicate=distributed
        fi
        for ((r = 1; r <= repeat; r++)); do
            name="$kind-s$s-np$np-r$r"
            timeout "${BC_SCALING_TIMEOUT:-120}" mpirun --oversubscribe --bind-to none -np "$np" "$bin" \
                bc --scale "$s" --sources "${BC_SCALING_SOURCES:-64}" --replicate "$replicate" --device "${BC_SCALING_DEVICE:-gpu}" \
                --gpu-transport "${BC_SCALING_TRANSPORT:-auto}" --output "$out/$name.h5" --force \
                >"$out/$name.log" 2>&1 || echo "$name: failed or timed out (log: $out/$name.log)"
        done
    done
done
python3 - "$out" <<'PY'
import sys, glob, os, re, statistics, h5py
out = sys.argv[1]
runs = {}
for path in glob.glob(f"{out}/*.h5"):
    kind, scale, np_, _ = re.match(r"(\w+)-s(\d+)-np(\d+)-r(\d+)", os.path.basename(path)).groups()
    with h5py.File(path) as f:
        a = f["bc"].attrs
        runs.setdefault((kind, int(np_)), []).append(
            (float(a["bc_time"]), float(a.get("bc_setup_time", float("nan"))), int(a["arcs"]), int(a["sources"]), int(a["bytes_sent_per_rank"]), int(scale),
             a["replicate"].decode() if isinstance(a["replicate"], bytes) else str(a["replicate"])))
print(f"{'scaling':<7} {'replicate':<11} {'SCALE':>5} {'GPUs':>4} {'arcs':>11} {'BC s':>8} {'setup s':>8} {'arcs*src/s':>11} {'eff':>5} {'MB sent/rank':>12}")
for kind in ("strong", "weak"):
    base = None
    for np_ in sorted(p for k, p in runs if k == kind):
        rows = runs[(kind, np_)]
        secs = statistics.median(r[0] for r in rows)
        setup = statistics.median(r[1] for r in rows)
        _, _, arcs, sources, sent, scale, rep = rows[0]
        rate = arcs * sources / secs
        if base is None:
            base = (np_, secs, rate)
        eff = base[1] * base[0] / (np_ * secs) if kind == "strong" else (rate / np_) / (base[2] / base[0])
        print(f"{kind:<7} {rep:<11} {scale:>5} {np_:>4} {arcs:>11} {secs:>8.3f} {setup:>8.3f} {rate:>11.3e} {eff:>5.2f} {sent / 1e6:>12.1f}")
PY
