# shellcheck shell=bash
# Mesh smoothing for scripts/gpu-check (sourced there; it defines $bin, $out, status and
# run_tessera; on its own: `GPU_CHECK_PARTS=mesh scripts/gpu-check`).
# check_mesh: `tessera mesh smooth` of a jittered Kuhn box (the seed's bar2 perturbation, 16^3
# cubes, 20 iterations) on the CPU (the reference) and on one GPU (kernels/mesh.cu: the l2v
# cell and node kernels, the laplace node kernel) for l2v scalar and block, plain and smart
# laplace, and l2v on 2 ranks sharing the GPU: every node's final position within 1e-12
# relative of the CPU's (max |gpu - cpu| / max |cpu|) and the same iteration count. Then node
# updates/s of l2v and laplace on one GPU for a box of $GPU_CHECK_MESH_CUBES cubes a side (214:
# 10.0M nodes, 58.8M tets). Prints a table; sets status=1 on any difference.
check_mesh() {
    local cubes=${GPU_CHECK_MESH_CUBES:-214}
    local -a small=(mesh smooth box 16 16 16 --perturb bar2 --iterations 20 --tolerance 0)
    local pairs=() case name np
    local -a cases=(
        "l2v-scalar:--method l2v"
        "l2v-block:--method l2v --preconditioner block"
        "laplace:--method laplace"
        "laplace-smart:--method laplace --smart"
    )
    for case in "${cases[@]}"; do
        name=${case%%:*}
        read -r -a args <<<"${case#*:}"
        run_tessera "mesh-$name-cpu" 1 "${small[@]}" --device cpu "${args[@]}" || continue
        run_tessera "mesh-$name-gpu" 1 "${small[@]}" --device gpu "${args[@]}" &&
            pairs+=("mesh-$name-cpu:mesh-$name-gpu")
    done
    np=2
    run_tessera "mesh-l2v-scalar-gpu-np$np" "$np" "${small[@]}" --device gpu --method l2v &&
        pairs+=("mesh-l2v-scalar-cpu:mesh-l2v-scalar-gpu-np$np")
    for m in l2v laplace; do
        run_tessera "mesh-timing-$m" 1 mesh smooth box "$cubes" "$cubes" "$cubes" --perturb bar2 \
            --iterations 3 --tolerance 0 --method "$m" --device gpu --write-mesh false || true
    done
    python3 - "$out" "${pairs[@]}" <<'PY' || status=1
import sys, h5py
import numpy as np
out, pairs = sys.argv[1], sys.argv[2:]
bad = 0
print(f"{'case':<24} {'nodes':>7} {'iters':>5} {'max rel diff':>12} {'ok':>3} {'cpu upd/s':>10} {'gpu upd/s':>10}")
for pair in pairs:
    ref, name = pair.split(":")
    try:
        r, g = h5py.File(f"{out}/{ref}.h5", "r"), h5py.File(f"{out}/{name}.h5", "r")
    except OSError as e:
        print(f"{name}: missing result ({e})"); bad += 1; continue
    pr, pg = r["VTKHDF/Points"][:], g["VTKHDF/Points"][:]
    diff = float(np.max(np.abs(pr - pg)) / np.max(np.abs(pr)))
    iters = (int(r["mesh/history"].attrs["iterations"]), int(g["mesh/history"].attrs["iterations"]))
    ok = diff <= 1e-12 and iters[0] == iters[1]
    bad += not ok
    rate = lambda f: float(f["mesh/history"].attrs["node_updates_per_second"])
    print(f"{name.removeprefix('mesh-'):<24} {len(pr):>7} {iters[1]:>5} {diff:>12.3e} {'yes' if ok else 'NO':>3} "
          f"{rate(r):>10.3e} {rate(g):>10.3e}")
for m in ("l2v", "laplace"):
    try:
        f = h5py.File(f"{out}/mesh-timing-{m}.h5", "r")
    except OSError:
        print(f"timing {m}: no result"); continue
    h = f["mesh/history"]
    print(f"timing {m}: {int(f['mesh'].attrs['nodes'])} nodes, {int(h.attrs['iterations'])} iterations, "
          f"{float(h.attrs['node_updates_per_second']):.3e} node updates/s; per iteration (median) cell "
          f"{np.median(h['seconds_cell'][:]):.4f} s, node {np.median(h['seconds_node'][:]):.4f} s, "
          f"copies+exchange {np.median(h['seconds_exchange'][:]):.4f} s; total {float(h.attrs['seconds']):.2f} s")
sys.exit(1 if bad else 0)
PY
}
