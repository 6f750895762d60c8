#!/usr/bin/env bash
# scripts/weak-scaling-mesh.sh: weak scaling of mesh smoothing (l2v on the GPUs) and of the
# geometric partitioner at a fixed node count per rank, on 1, 2, 4 (and 8) ranks, one per GPU
# present. Rank count p smooths a box of C x C x (p (C+1) - 1) cubes, extent 1 x 1 x p (the
# same cubes; p (C+1)^3 nodes), its interior pulled as the seed's bar2, for
# $MESH_WEAK_ITERATIONS l2v iterations (tolerance 0: every run does them all), and partitions
# the plain box into 64 parts. Efficiency: time per iteration (partition: seconds) on 1 rank
# over that on p ranks. Prints a table and each run's wall time; logs and result files go
# under $MESH_WEAK_OUT.
#
# Smoothing a generated box, each rank makes only its own layers of it (its cells and one
# ghost layer), so its set-up does not grow with the rank count. Partitioning is not so: every
# rank builds the whole box and its node graph (replicated set-up, about 3M nodes per 2 s per
# 16 cores) before the timed partition, which makes the partition runs the slow ones; C = 214
# gives the issue's 10M nodes per GPU (9.94M).
#
# Environment: TESSERA_BIN (default target/release/tessera), MESH_WEAK_CUBES (C, default 135),
# MESH_WEAK_ITERATIONS (10), MESH_WEAK_OUT (out/weak-mesh), MESH_WEAK_TRANSPORT
# (gpu_transport: auto, nccl or mpi; default auto), MESH_WEAK_RANKS (the rank counts, default
# 1, 2, 4, ... up to the GPUs present), MESH_WEAK_SMOOTH and MESH_WEAK_PARTITION (1, or 0 to
# leave those runs out).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_nccl_visible
bin=${TESSERA_BIN:-target/release/tessera}
cubes=${MESH_WEAK_CUBES:-135}
iterations=${MESH_WEAK_ITERATIONS:-10}
out=${MESH_WEAK_OUT:-out/weak-mesh}
transport=${MESH_WEAK_TRANSPORT:-auto}
[[ -x $bin ]] || die "no binary at $bin (build with cargo build --release)"
(($(gpus_present) > 0)) || die "nvidia-smi lists no GPU"
mkdir -p "$out"

status=0
run() {
    local name=$1 np=$2
    shift 2
    rm -f "$out/$name.h5"
    local t=$SECONDS
    if "${MPIRUN[@]}" --bind-to none -np "$np" "$bin" "$@" --write-mesh false \
        --output "$out/$name.h5" >"$out/$name.log" 2>&1; then
        echo "$name: $((SECONDS - t)) s wall" >&2
    else
        echo "FAILED: $name (log: $out/$name.log)" >&2
        tail -5 "$out/$name.log" >&2
        status=1
    fi
}

names=()
for np in $(scaling_ranks "${MESH_WEAK_RANKS:-}"); do
    nz=$((np * (cubes + 1) - 1))
    box=(box "$cubes" "$cubes" "$nz" --extent "1,1,$np")
    ((${MESH_WEAK_SMOOTH:-1})) && run "smooth-np$np" "$np" mesh smooth "${box[@]}" --perturb bar2 \
        --method l2v --iterations "$iterations" --tolerance 0 --device gpu --gpu-transport "$transport"
    ((${MESH_WEAK_PARTITION:-1})) && run "partition-np$np" "$np" mesh partition "${box[@]}" --parts 64 --device cpu
    names+=("$np")
done

"${PYTHON:-python3}" - "$out" "${names[@]}" <<'PY' || status=1
import sys, h5py
out, counts = sys.argv[1], [int(c) for c in sys.argv[2:]]
print(f"{'ranks':>5} {'nodes':>11} {'s/iteration':>11} {'updates/s':>10} {'eff':>5} "
      f"{'partition s':>11} {'cut':>10} {'imbalance':>9} {'eff':>5}")
def result(name):
    try:
        return h5py.File(f"{out}/{name}.h5", "r")
    except OSError:
        return None
base = [None, None]
for p in counts:
    s, q = result(f"smooth-np{p}"), result(f"partition-np{p}")
    row = f"{p:>5} "
    if s is not None:
        h = s["mesh/history"].attrs
        per_it = float(h["seconds"]) / max(int(h["iterations"]), 1)
        base[0] = base[0] or per_it
        row += (f"{int(s['mesh'].attrs['nodes']):>11} {per_it:>11.4f} "
                f"{float(h['node_updates_per_second']):>10.3e} {base[0] / per_it:>5.2f} ")
    else:
        row += f"{'-':>11} {'-':>11} {'-':>10} {'-':>5} "
    if q is not None:
        a = q["mesh/partition"].attrs
        part_s = float(a["seconds"])
        base[1] = base[1] or part_s
        row += (f"{part_s:>11.3f} {int(a['edge_cut']):>10} {float(a['imbalance']):>9.4f} "
                f"{base[1] / part_s:>5.2f} ({int(q['mesh'].attrs['nodes'])} nodes)")
    print(row)
print("eff: the 1-rank time over the p-rank time (work per rank fixed); smoothing s/iteration is "
      "the smoothing seconds (guard, exchanges, summaries included) over the iterations")
PY
exit $status
