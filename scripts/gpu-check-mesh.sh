# shellcheck shell=bash
# Mesh smoothing for scripts/gpu-check (sourced there; it defines $bin, $out, status and
# run_tessera; on its own: `GPU_CHECK_PARTS=mesh scripts/gpu-check`).
# check_mesh: `tessera mesh smooth` of a jittered Kuhn box (the seed's bar2 perturbation, 16^3
# cubes, 20 iterations) on the CPU (the reference) and on one GPU (kernels/mesh.cu: the whole
# iteration resident on the device) for l2v scalar and block, plain and smart laplace and
# opt-colour, and each of them again on every rank count of gpu-check past 1, one rank per GPU
# (ghosts through NCCL), or, on a host of one GPU, on 2, 3 and 4 ranks sharing it (ghosts
# staged through MPI; GPU_CHECK_MESH_SHARED overrides the counts): every node's
# final position within 1e-12 relative of the CPU's (max |gpu - cpu| / max |cpu|), the same
# iteration count, fixed nodes bitwise the CPU's, no inverted cell, the minimum eta never
# falling (but for plain laplace), and every multi-rank GPU run bitwise the 1-rank one. Then node
# updates/s on one GPU for a box of $GPU_CHECK_MESH_CUBES cubes a side (214: 9.94M nodes,
# 58.8M tets), $GPU_CHECK_MESH_ITERATIONS iterations, for each method in
# $GPU_CHECK_MESH_TIMED, and the geometric partition of the plain box into 64 parts on the
# host's cores (GPU_CHECK_MESH_PARTITION=0 leaves it out). GPU_CHECK_MESH_CASES names the
# comparisons to run (default all: l2v-scalar l2v-block laplace laplace-smart opt-colour).
# Prints a table; sets status=1 on any failed check.
check_mesh() {
    local cubes=${GPU_CHECK_MESH_CUBES:-214} iters=${GPU_CHECK_MESH_ITERATIONS:-10}
    local -a small=(mesh smooth box 16 16 16 --perturb bar2 --iterations 20 --tolerance 0)
    local -a timed
    read -r -a timed <<<"${GPU_CHECK_MESH_TIMED:-l2v laplace opt-colour}"
    local case name np m
    local -a multi=("${counts[@]:1}")
    ((${gpus:-1} == 1)) && read -r -a multi <<<"${GPU_CHECK_MESH_SHARED:-2 3 4}"
    printf '%-24s %7s %5s %12s %5s %3s %6s %8s %3s %10s %10s\n' case nodes iters 'max rel diff' fixed inv \
        'eta up' 'same np1' ok 'cpu upd/s' 'gpu upd/s'
    local -a cases=(
        "l2v-scalar:--method l2v"
        "l2v-block:--method l2v --preconditioner block"
        "laplace:--method laplace"
        "laplace-smart:--method laplace --smart"
        "opt-colour:--method opt-colour"
    )
    local wanted=" ${GPU_CHECK_MESH_CASES:-l2v-scalar l2v-block laplace laplace-smart opt-colour} "
    for case in "${cases[@]}"; do
        name=${case%%:*}
        [[ $wanted == *" $name "* ]] || continue
        read -r -a args <<<"${case#*:}"
        run_tessera "mesh-$name-cpu" 1 "${small[@]}" --device cpu "${args[@]}" || continue
        run_tessera "mesh-$name-gpu" 1 "${small[@]}" --device gpu "${args[@]}" &&
            { mesh_table "" "mesh-$name-cpu:mesh-$name-gpu" || status=1; }
        for np in "${multi[@]}"; do
            local transport=()
            ((np > ${gpus:-1})) && transport=(--gpu-transport mpi)
            run_tessera "mesh-$name-gpu-np$np" "$np" "${small[@]}" --device gpu "${args[@]}" "${transport[@]}" &&
                { mesh_table "" "mesh-$name-cpu:mesh-$name-gpu-np$np:mesh-$name-gpu" || status=1; }
        done
    done
    local t
    for m in "${timed[@]}"; do
        t=$SECONDS
        run_tessera "mesh-timing-$m" 1 mesh smooth box "$cubes" "$cubes" "$cubes" --perturb bar2 \
            --iterations "$iters" --tolerance 0 --method "$m" --device gpu --write-mesh false || true
        echo "mesh-timing-$m: $((SECONDS - t)) s wall (set-up included)"
        mesh_table "$m" || status=1
    done
    ((${GPU_CHECK_MESH_PARTITION:-1})) || return 0
    t=$SECONDS
    run_tessera mesh-timing-partition 1 mesh partition box "$cubes" "$cubes" "$cubes" --parts 64 \
        --device cpu --write-mesh false || return 0
    echo "mesh-timing-partition: $((SECONDS - t)) s wall (set-up included)"
    python3 - "$out/mesh-timing-partition.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
a = f["mesh/partition"].attrs
print(f"timing partition: {int(f['mesh'].attrs['nodes'])} nodes, 64 parts on the host's cores: "
      f"{float(a['seconds']):.3f} s, {int(a['iterations'])} iterations, cut {int(a['edge_cut'])}, "
      f"imbalance {float(a['imbalance']):.4f} (target <= 0.3 s)")
PY
}

# mesh_table TIMED [PAIRS...]: the comparison rows of PAIRS (REF:NAME[:SINGLE]) and the
# timing rows of the methods in TIMED; non-zero where a check fails or a result is missing.
mesh_table() {
    python3 - "$out" "$@" <<'PY'
import sys, h5py
import numpy as np
out, timed, pairs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
bad = 0
open_ = lambda name: h5py.File(f"{out}/{name}.h5", "r")
def whole(f, name):
    # A node dataset in the whole mesh's order (the file holds one piece per rank).
    ids, d = f["VTKHDF/PointData/global_id"][:], f[f"VTKHDF/{name}"][:]
    out = np.empty((int(ids.max()) + 1,) + d.shape[1:], d.dtype)
    out[ids] = d
    return out
for pair in pairs:
    ref, name, *single = pair.split(":")
    try:
        r, g = open_(ref), open_(name)
        s = open_(single[0]) if single else None
    except OSError as e:
        print(f"{name}: missing result ({e})"); bad += 1; continue
    pr, pg = whole(r, "Points"), whole(g, "Points")
    diff = float(np.max(np.abs(pr - pg)) / np.max(np.abs(pr)))
    fixed = whole(r, "PointData/fixed").astype(bool)
    fixed_same = bool(np.array_equal(pr[fixed], pg[fixed]))
    inverted = int(g["mesh/quality/after"].attrs["inverted"])
    eta = g["mesh/history/min_eta"][:]
    before = float(g["mesh/quality/before"].attrs["min_eta"])
    plain = name.startswith("mesh-laplace-gpu")
    eta_up = plain or bool(np.all(np.diff(np.concatenate([[before], eta])) >= 0))
    same = s is None or bool(np.array_equal(pg, whole(s, "Points")))
    iters = (int(r["mesh/history"].attrs["iterations"]), int(g["mesh/history"].attrs["iterations"]))
    ok = diff <= 1e-12 and iters[0] == iters[1] and fixed_same and inverted == 0 and eta_up and same
    bad += not ok
    rate = lambda f: float(f["mesh/history"].attrs["node_updates_per_second"])
    yn = lambda b: "yes" if b else "NO"
    print(f"{name.removeprefix('mesh-'):<24} {len(pr):>7} {iters[1]:>5} {diff:>12.3e} {yn(fixed_same):>5} "
          f"{inverted:>3} {yn(eta_up):>6} {'-' if s is None else yn(same):>8} {yn(ok):>3} "
          f"{rate(r):>10.3e} {rate(g):>10.3e}")
for m in timed:
    try:
        f = open_(f"mesh-timing-{m}")
    except OSError:
        print(f"timing {m}: no result"); bad += 1; continue
    h = f["mesh/history"]
    print(f"timing {m}: {int(f['mesh'].attrs['nodes'])} nodes, {int(h.attrs['iterations'])} iterations, "
          f"{float(h.attrs['node_updates_per_second']):.3e} node updates/s; per iteration (median) cell "
          f"{np.median(h['seconds_cell'][:]):.4f} s, node {np.median(h['seconds_node'][:]):.4f} s, "
          f"exchange {np.median(h['seconds_exchange'][:]):.4f} s; smoothing {float(h.attrs['seconds']):.2f} s, "
          f"min eta {float(f['mesh/quality/before'].attrs['min_eta']):.4f} -> {float(f['mesh/quality/after'].attrs['min_eta']):.4f}, "
          f"F {float(f['mesh/quality/before'].attrs['deformation']):.6e} -> {float(f['mesh/quality/after'].attrs['deformation']):.6e}")
sys.exit(1 if bad else 0)
PY
}
