#!/usr/bin/env bash
# scripts/weak-scaling-bfs.sh: BFS weak scaling on the GPUs of one host (issue 31), with the
# prebuilt release binary (no Rust toolchain needed). For 1, 2 and 4 ranks (those the GPUs
# present allow, one rank per GPU): a Kronecker graph of SCALE $WEAK_SCALE (26) per GPU, i.e.
# SCALE 26 + log2(ranks), $WEAK_ROOTS (64) searches validated on the devices, in 1D and in 2D
# (the most square grid). Prints one row per run:
# - harmonic-mean TEPS and weak-scaling efficiency, TEPS / (ranks x the 1-GPU 1D TEPS);
# - per search (means over the searches, summed over levels; each level's slowest rank):
#   local work, of it imbalance (slowest rank less the ranks' mean), exchanges, of them
#   waiting (slowest rank less the quickest), the reduction that agrees on the next
#   direction, levels;
# - bytes the busiest rank sent per search, and the communication model's share of one rank
#   (src/workloads/bfs/comm_model.rs: an exact count for bitmap levels, a bound for queues);
# - validation seconds per root (mean, on the devices);
# - on several ranks, the model's exchange time per search beside the measured one (`model`).
# With WEAK_LEVELS=1, each run's levels follow its row: per level index, the searches'
# directions, mean frontier vertices, local and exchange milliseconds (the slowest rank's),
# the ranks' mean local time, the reduction after the level, MB the busiest rank sent, and
# the model's MB per rank for the level in 1D and in 2D.
# Logs and result files in $WEAK_OUT (out/weak-scaling-bfs). About 2 minutes on 4 H100s.
#
# Environment: TESSERA_BIN (default target/release/tessera), WEAK_SCALE (26), WEAK_ROOTS
# (64), WEAK_RANKS (1, 2, 4, ... up to the GPUs present), WEAK_PARTITIONS ("1d 2d"),
# WEAK_LEVELS (unset), WEAK_ARGS (more `tessera bfs` flags, e.g. "--beta 96"), WEAK_OUT
# (out/weak-scaling-bfs), WEAK_DEVICE (gpu; cpu for a dry run of the script on a host
# without GPUs, at a small WEAK_SCALE).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
scale=${WEAK_SCALE:-26}
roots=${WEAK_ROOTS:-64}
out=${WEAK_OUT:-out/weak-scaling-bfs}
read -r -a ranks <<<"$(scaling_ranks "${WEAK_RANKS:-}")"
read -r -a partitions <<<"${WEAK_PARTITIONS:-1d 2d}"
read -r -a extra <<<"${WEAK_ARGS:-}"
[[ -x $bin ]] || { echo "error: no binary at $bin (build with cargo build --release)" >&2; exit 1; }
device=${WEAK_DEVICE:-gpu}
gpus=$(gpus_present)
[[ $device == cpu ]] && gpus=64
((gpus > 0)) || die "nvidia-smi lists no GPU"
mkdir -p "$out"

# figure LOG NAME: the number printed after "NAME:" in a run's log.
figure() {
    sed -n "s/^$2: *!* *\([^ ]*\).*/\1/p" "$1" | head -1
}

# levels FILE RANKS: the per-level means of a run's searches (/bfs/per_level), by level index,
# with the communication model's bytes per rank for the level in 1D and in 2D.
levels() {
    python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
ranks = int(sys.argv[2])
with h5py.File(sys.argv[1]) as f:
    g = f["bfs/per_level"]
    d = {k: g[k][:] for k in g}
for lvl in np.unique(d["level"]):
    m = d["level"] == lvl
    ms = lambda k: 1e3 * d[k][m].mean()
    dirs = "".join(sorted({"B" if x else "T" for x in d["direction"][m]}))
    print(f"    level {lvl}: {m.sum():>3} searches {dirs:<2} frontier {d['frontier_vertices'][m].mean():>11.4g}"
          f"  local {ms('time_local'):7.3f} ms (mean rank {ms('time_local_mean'):7.3f})"
          f"  exchange {ms('time_exchange'):7.3f} ms  reduce {ms('time_reduce'):6.3f} ms"
          f"  sent {d['bytes_sent_max_rank'][m].mean() / 1e6:8.3f} MB"
          f"  model 1d/2d {d['model_bytes_1d'][m].mean() / ranks / 1e6:.3f}/{d['model_bytes_2d'][m].mean() / ranks / 1e6:.3f} MB")
PY
}

# model FILE: the communication model's exchange time per search beside the measured one.
# Per level, steps x lambda + the model's bytes per rank / B: steps are the level's exchanges
# (1D top-down: the counts, then the pairs; 1D bottom-up: the bitmaps' all-gather; 2D: the
# expand along the column, counts and items, where R > 1, then the fold along the row where
# C > 1, and bottom-up the C hand-overs of the segment), lambda ($WEAK_LAMBDA_US, 25 us) and B
# ($WEAK_LINK_GBS, 100 GB/s) as fitted on a 4-H100 NVLink host (docs/benchmarks.md).
model() {
    python3 - "$1" "${WEAK_LAMBDA_US:-25}" "${WEAK_LINK_GBS:-100}" <<'PY'
import sys, h5py, numpy as np
lam, link = float(sys.argv[2]) * 1e-6, float(sys.argv[3]) * 1e9
with h5py.File(sys.argv[1]) as f:
    a = dict(f["bfs"].attrs)
    g = f["bfs/per_level"]
    d = {k: g[k][:] for k in g}
r, c = int(a["grid_rows"]), int(a["grid_cols"])
two_d = a["partition"] == "2d"
if two_d:
    td = 2 * (r > 1) + 2 * (c > 1)
    bu = (r > 1) + (c + 2) * (c > 1)
    bytes_ = d["model_bytes_2d"]
else:
    td, bu = 2 * (r * c > 1), 1 * (r * c > 1)
    bytes_ = d["model_bytes_1d"]
steps = np.where(d["direction"] == 1, bu, td)
searches = len(np.unique(d["root_index"]))
model = (steps * lam + bytes_ / (r * c) / link).sum() / searches
least = d["time_exchange_min"].sum() / searches
most = d["time_exchange"].sum() / searches
print(f"    model: {1e3 * model:.3f} ms of exchanges per search ({steps.sum() / searches:.1f} steps,"
      f" {bytes_.sum() / (r * c) / searches / 1e6:.1f} MB a rank); measured {1e3 * least:.3f}"
      f" (least rank) to {1e3 * most:.3f} ms (most)")
PY
}

status=0
base=""
printf '%-5s %-4s %-5s %-11s %-5s %-9s %-9s %-9s %-9s %-9s %-6s %-9s %-9s %-9s\n' \
    ranks part SCALE "TEPS" eff "local s" imbal "exch s" wait "agree s" levels "sent B" "model B" "valid s"
for np in "${ranks[@]}"; do
    ((np <= gpus)) || { echo "(skipping $np ranks: $gpus GPUs present)"; continue; }
    s=$((scale + $(log2_ceil "$np")))
    for part in "${partitions[@]}"; do
        name="bfs-$part-np$np-s$s"
        rm -f "$out/$name.h5"
        if ! mpirun --oversubscribe --bind-to none -np "$np" "$bin" bfs --device "$device" \
            --scale "$s" --roots "$roots" --partition "$part" --validator device \
            --output "$out/$name.h5" "${extra[@]}" >"$out/$name.log" 2>&1; then
            echo "FAILED: $name (log: $out/$name.log)"
            tail -3 "$out/$name.log"
            status=1
            continue
        fi
        log="$out/$name.log"
        teps=$(figure "$log" "bfs  harmonic_mean_TEPS")
        [[ -z $base && $np == 1 && $part == 1d ]] && base=$teps
        eff=$(awk -v t="$teps" -v b="${base:-0}" -v p="$np" \
            'BEGIN { if (b > 0) printf "%.3f", t / (p * b); else printf "-" }')
        printf '%-5s %-4s %-5s %-11s %-5s %-9s %-9s %-9s %-9s %-9s %-6s %-9s %-9s %-9s\n' \
            "$np" "$part" "$s" "$teps" "$eff" \
            "$(figure "$log" search_local_seconds)" "$(figure "$log" search_imbalance_seconds)" \
            "$(figure "$log" search_exchange_seconds)" "$(figure "$log" search_exchange_wait_seconds)" \
            "$(figure "$log" search_direction_agreement_seconds)" "$(figure "$log" search_levels)" \
            "$(figure "$log" bytes_sent_per_rank_per_search)" \
            "$(figure "$log" model_bytes_per_rank_per_search)" \
            "$(figure "$log" "bfs  mean_validate")"
        ((np > 1)) && model "$out/$name.h5"
        [[ -n ${WEAK_LEVELS:-} ]] && levels "$out/$name.h5" "$np"
    done
done
exit "$status"
