# shellcheck shell=bash
# Euler circuits for scripts/gpu-check (sourced there; it defines $bin, $out and status).
# check_euler: `tessera euler` on the CPU (one rank, the reference) and on GPUs for every
# Eulerian generator and pairing, small: on one rank (everything on the device) and on
# $GPU_CHECK_EULER_RANKS ranks (the several-rank path: the mates, the ruling set's jumping and
# the forest through the device exchange layer, NCCL, and once staged through MPI
# (union-random-mpi); the circuit's order (cut, ranking, placement) on the devices; by default one
# rank per GPU, 2 up to the GPUs present, or 2 and 3 ranks sharing the GPU of a one-GPU host:
# tessera refuses more ranks than GPUs on a host of several), the circuit's checksum (order-dependent: edges,
# directions), its initial trail count and the checker's verdict must equal the CPU run's.
# A graph in two pieces must stop with the CPU check's line on 1 and 2 ranks. Then one timing row on one GPU: the union of two Hamiltonian cycles with
# $GPU_CHECK_EULER_TIMING_VERTICES (2^25) vertices, 2^26 edges, adjacency and random pairing,
# with the sequential Hierholzer beside it. Prints a table; sets status=1 on any difference.
check_euler() {
    local timing=${GPU_CHECK_EULER_TIMING_VERTICES:-33554432}
    local -a ranks
    local default_ranks="2 3"
    ((gpus > 1)) && default_ranks=$(seq -s ' ' 2 "$gpus")
    read -r -a ranks <<<"${GPU_CHECK_EULER_RANKS:-$default_ranks}"
    local pairs=() name args np
    # Exactly two odd vertices (1 and 3), and a digraph unbalanced at 0 (+1) and 3 (-1): --trail.
    printf '0 1\n1 2\n2 0\n2 3\n3 4\n4 2\n4 4\n1 3\n' >"$out/euler-trail.el"
    printf '0 1\n1 2\n2 0\n0 3\n' >"$out/euler-arcs.el"
    local -a cases=(
        "trail:--input $out/euler-trail.el --trail"
        "directed-trail:--input $out/euler-arcs.el --directed --trail"
        "complete:--generator complete --vertices 9"
        "hypercube:--generator hypercube --d 6"
        "square-random:--generator lattice --dims 7,5 --pairing random"
        "square-straight:--generator lattice --dims 256,256 --pairing straight"
        "triangular:--generator lattice --dims 4,6 --triangular"
        "cubic-straight:--generator lattice --dims 3,4,5 --pairing straight"
        "union-adjacency:--generator union-cycles --vertices 100000 --k 2"
        "union-random:--generator union-cycles --vertices 100000 --k 3 --pairing random"
        "union-random-mpi:--generator union-cycles --vertices 100000 --k 3 --pairing random --gpu-transport mpi"
        "cycles:--generator random-cycles --vertices 4000 --edges 200000 --k 4"
        "cycles-random:--generator random-cycles --vertices 4000 --edges 200000 --k 4 --pairing random"
        "de-bruijn:--generator de-bruijn --alphabet 3 --word 6"
        "kronecker-eulerized:--scale 12 --eulerize"
    )
    for case in "${cases[@]}"; do
        name=${case%%:*}
        read -r -a args <<<"${case#*:}"
        run_tessera "euler-$name-cpu" 1 euler --device cpu "${args[@]}" || continue
        run_tessera "euler-$name-gpu" 1 euler --device gpu "${args[@]}" &&
            pairs+=("euler-$name-cpu:euler-$name-gpu")
        for np in "${ranks[@]}"; do
            run_tessera "euler-$name-gpu-np$np" "$np" euler --device gpu "${args[@]}" &&
                pairs+=("euler-$name-cpu:euler-$name-gpu-np$np")
        done
    done
    # Two triangles: the GPU's connectivity check fails, and the CPU's names the components.
    printf '0 1\n1 2\n2 0\n3 4\n4 5\n5 3\n' >"$out/euler-two-pieces.el"
    for np in 1 2; do
        local log="$out/euler-two-pieces-np$np.log"
        if mpirun --oversubscribe -np "$np" "$bin" euler --device gpu --input "$out/euler-two-pieces.el" \
            --output "$out/euler-two-pieces.h5" >"$log" 2>&1 ||
            ! grep -q "not Eulerian: edges lie in 2 components" "$log"; then
            echo "FAILED: euler-two-pieces on $np ranks should stop with 'edges lie in 2 components' (log: $log)"
            status=1
        else
            echo "euler-two-pieces, $np ranks: not Eulerian, as expected: $(grep -o 'not Eulerian.*' "$log" | head -1)"
        fi
    done
    run_tessera "euler-timing-adjacency" 1 euler --device gpu --generator union-cycles \
        --vertices "$timing" --k 2 --hierholzer --write-circuit false || true
    run_tessera "euler-timing-random" 1 euler --device gpu --generator union-cycles \
        --vertices "$timing" --k 2 --pairing random --hierholzer --write-circuit false || true
    python3 - "$out" "${pairs[@]}" <<'PY' || status=1
import sys, h5py
out, pairs = sys.argv[1], sys.argv[2:]
bad = 0
print(f"{'case':<26} {'edges':>9} {'trails':>7} {'checksum':>18} {'same':>5} {'valid':>5} {'cpu edges/s':>11} {'gpu edges/s':>11}")
for pair in pairs:
    ref_name, name = pair.split(":")
    try:
        r, g = h5py.File(f"{out}/{ref_name}.h5")["euler"].attrs, h5py.File(f"{out}/{name}.h5")["euler"].attrs
    except OSError as e:
        print(f"{name}: missing result ({e})"); bad += 1; continue
    same = all(r[k] == g[k] for k in ("checksum", "initial_trails", "num_edges"))
    ok = same and g["valid"] == 1 and g["verified"] == 1
    bad += not ok
    case = name.removeprefix("euler-").replace("-gpu", "")
    print(f"{case:<26} {int(g['num_edges']):>9} {int(g['initial_trails']):>7} {int(g['checksum']):>18x} "
          f"{'yes' if same else 'NO':>5} {'yes' if g['valid'] == 1 else 'NO':>5} {r['edges_per_second']:>11.3e} {g['edges_per_second']:>11.3e}")
for name in ("euler-timing-adjacency", "euler-timing-random"):
    try:
        a = h5py.File(f"{out}/{name}.h5")["euler"].attrs
    except OSError as e:
        print(f"{name}: missing result ({e})"); bad += 1; continue
    phases = " ".join(f"{p} {a[p + '_seconds']:.3f}" for p in ("check", "pair", "label", "tree", "splice", "rank"))
    h = a.get("hierholzer_seconds", float("nan"))
    solve = a["num_edges"] / a["edges_per_second"]
    print(f"{name}: {int(a['num_edges'])} edges, {a['edges_per_second']:.3e} edges/s, {int(a['initial_trails'])} trails; "
          f"{phases}; hierholzer {h:.3f} s ({h / solve:.2f}x); valid {int(a['valid'])}")
sys.exit(1 if bad else 0)
PY
}
