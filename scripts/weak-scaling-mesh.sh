#!/usr/bin/env bash
# scripts/weak-scaling-mesh.sh: weak scaling of mesh smoothing (each method on the GPUs) and
# of the geometric partitioner at a fixed node count per rank, on 1, 2, 4 (and 8) ranks, one
# per GPU present. Rank count p works on a box of C x C x (p (C+1) - 1) cubes, extent
# 1 x 1 x p (the same cubes; p (C+1)^3 nodes): it smooths it, its interior pulled as the
# seed's bar2, for $MESH_WEAK_ITERATIONS iterations (tolerance 0: every run does them all)
# with each method in $MESH_WEAK_METHODS, and partitions the plain box into 64 p parts on
# the host's cores. The parts keep their size and shape as the box grows (a fixed 64 parts
# of a p times longer box are p times longer parts, which take more iterations to balance:
# 34 against 5 at p = 2), and every rank count runs the same worker threads per rank (the
# host's cores over the largest rank count; a 1-rank run on all the cores would time a
# larger machine). The 64-part partition of one rank's box is the 1-rank row. Efficiency: time per iteration (partition: seconds) on 1 rank over that on p ranks. Each
# run prints its row as it finishes (a run cut short leaves the rows before it); logs and
# result files go under $MESH_WEAK_OUT.
#
# Smoothing a generated box, each rank makes only its own layers of it (its cells and one
# ghost layer), so its set-up does not grow with the rank count. Partitioning is not so:
# every rank builds the whole box and its node graph (replicated set-up, about 3M nodes per
# 2 s per 16 cores) before the timed partition, which then works on the rank's own block of
# the nodes; that makes the partition runs the slow ones. The timed partition excludes
# gathering the parts. C = 214 gives the issue's 10M nodes per GPU (9.94M).
#
# Environment: TESSERA_BIN (default target/release/tessera), MESH_WEAK_CUBES (C, default 214),
# MESH_WEAK_ITERATIONS (10), MESH_WEAK_METHODS ("l2v laplace opt-colour"; "" for the partition
# runs alone, on a host without GPUs: give MESH_WEAK_RANKS there), MESH_WEAK_OUT
# (out/weak-mesh), MESH_WEAK_TRANSPORT (gpu_transport: auto, nccl or mpi; default auto),
# MESH_WEAK_RANKS (the rank counts, default 1, 2, 4, ... up to the GPUs present),
# MESH_WEAK_PARTITION (1, or 0 to leave those runs out), MESH_WEAK_PARTS_PER_RANK (64),
# MESH_WEAK_THREADS (worker threads per rank of the partition runs), MESH_WEAK_BASE_BIN (another binary,
# e.g. an older one, whose 1-rank partition runs beside it as the row `partition (base)`).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
cubes=${MESH_WEAK_CUBES:-214}
iterations=${MESH_WEAK_ITERATIONS:-10}
out=${MESH_WEAK_OUT:-out/weak-mesh}
transport=${MESH_WEAK_TRANSPORT:-auto}
read -r -a methods <<<"${MESH_WEAK_METHODS-l2v laplace opt-colour}"
base_bin=${MESH_WEAK_BASE_BIN:-}
[[ -x $bin ]] || die "no binary at $bin (build with cargo build --release)"
# Smoothing runs on the GPUs; the partition runs alone (MESH_WEAK_METHODS="") need none.
((${#methods[@]} == 0 || $(gpus_present) > 0)) || die "nvidia-smi lists no GPU"
mkdir -p "$out"

status=0
# run NAME NP BINARY ARGS...: one run, then its row.
run() {
    local name=$1 np=$2 exe=$3
    shift 3
    rm -f "$out/$name.h5"
    local t=$SECONDS
    if "${MPIRUN[@]}" --bind-to none -np "$np" "$exe" "$@" --write-mesh false \
        --output "$out/$name.h5" >"$out/$name.log" 2>&1; then
        row "$name" "$np" "$((SECONDS - t))" || status=1
    else
        echo "FAILED: $name (log: $out/$name.log)"
        tail -5 "$out/$name.log"
        status=1
    fi
}

# row NAME NP WALL: the run's figures and its efficiency against the same run on 1 rank.
row() {
    "${PYTHON:-python3}" - "$out" "$@" <<'PY'
import sys, re, h5py
out, name, p, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
one = re.sub(r"-np\d+$", "-np1", name)
def seconds(n):
    f = h5py.File(f"{out}/{n}.h5", "r")
    if "partition" in n:
        a = f["mesh/partition"].attrs
        return f, float(a["seconds"])
    h = f["mesh/history"].attrs
    return f, float(h["seconds"]) / max(int(h["iterations"]), 1)
f, s = seconds(name)
try:
    eff = f"{seconds(one)[1] / s:.2f}" if one.endswith("-np1") else "-"
except OSError:
    eff = "-"
nodes = int(f["mesh"].attrs["nodes"])
if "partition" in name:
    a = f["mesh/partition"].attrs
    what = (f"partition {s:.3f} s, {int(a['parts'])} parts, {int(a['iterations'])} iterations, "
            f"cut {int(a['edge_cut'])}, "
            f"imbalance {float(a['imbalance']):.4f}")
else:
    rate = float(f["mesh/history"].attrs["node_updates_per_second"])
    what = f"{s:.4f} s/iteration, {rate:.3e} node updates/s"
print(f"{name:<24} ranks {p}  nodes {nodes:>9}  {what}  eff {eff}  ({wall} s wall)", flush=True)
PY
}

read -r -a counts <<<"$(scaling_ranks "${MESH_WEAK_RANKS:-}")"
most=1
for np in "${counts[@]}"; do ((np > most)) && most=$np; done
threads=${MESH_WEAK_THREADS:-$(($(nproc) / most > 0 ? $(nproc) / most : 1))}
per_rank=${MESH_WEAK_PARTS_PER_RANK:-64}
echo "weak scaling, $((cubes + 1))^3 nodes per rank; eff: the 1-rank time over the p-rank time"
for np in "${counts[@]}"; do
    nz=$((np * (cubes + 1) - 1))
    box=(box "$cubes" "$cubes" "$nz" --extent "1,1,$np")
    for m in "${methods[@]}"; do
        run "$m-np$np" "$np" "$bin" mesh smooth "${box[@]}" --perturb bar2 --method "$m" \
            --iterations "$iterations" --tolerance 0 --device gpu --gpu-transport "$transport"
    done
    if ((${MESH_WEAK_PARTITION:-1})); then
        part=(mesh partition "${box[@]}" --parts $((per_rank * np)) --device cpu --threads "$threads")
        run "partition-np$np" "$np" "$bin" "${part[@]}"
        grep -h "partition phases" "$out/partition-np$np.log" || true
        if [[ -n $base_bin && $np == 1 ]]; then
            run "partition-base" 1 "$base_bin" "${part[@]}"
        fi
    fi
done
exit $status
