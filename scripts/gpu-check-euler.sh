# shellcheck shell=bash
# Euler circuits for scripts/gpu-check (sourced there; it defines $bin, $out and status).
# check_euler: `tessera euler` on the CPU (one rank, the reference) and on GPUs for every
# Eulerian generator and pairing, small: on one rank (everything on the device) and on
# $GPU_CHECK_EULER_RANKS ranks (the several-rank path: the edge-ends routed and the degrees
# counted on the devices, the mates, the ruling set's jumping and the forest through the
# device exchange layer, NCCL, and once staged through MPI (union-random-mpi); the circuit's
# order (cut, ranking, placement) on the devices; by default one rank per GPU: 2 and the GPUs
# present (3 or more only for the cases marked wide, to stay within about 90 s on 4 GPUs),
# or 2 and 3 ranks sharing the GPU of a one-GPU host, staged through MPI there (NCCL wants a
# GPU per rank): tessera refuses more ranks than GPUs on a host of several), the circuit's
# checksum (order-dependent: edges, directions), its initial trail count and the checker's
# verdict must equal the CPU run's. Each case prints its rows as it finishes. A graph in two
# pieces, and one with odd vertices, must stop with the CPU check's line on 1 and 2 ranks.
# Then one timing row on one GPU: the union of two Hamiltonian cycles with
# $GPU_CHECK_EULER_TIMING_VERTICES (2^23) vertices, 2^24 edges, adjacency pairing with the
# sequential Hierholzer beside it, and random pairing. Sets status=1 on any difference.
check_euler() {
    local timing=${GPU_CHECK_EULER_TIMING_VERTICES:-8388608}
    local -a ranks
    local default_ranks="2 3"
    ((gpus > 2)) && default_ranks="2 $gpus"
    ((gpus == 2)) && default_ranks="2"
    read -r -a ranks <<<"${GPU_CHECK_EULER_RANKS:-$default_ranks}"
    # Ranks sharing one GPU exchange through MPI (NCCL refuses two ranks on one device).
    local -a shared_transport=()
    ((gpus == 1)) && shared_transport=(--gpu-transport mpi)
    local pairs name args several np wide
    # Exactly two odd vertices (1 and 3), and a digraph unbalanced at 0 (+1) and 3 (-1): --trail.
    printf '0 1\n1 2\n2 0\n2 3\n3 4\n4 2\n4 4\n1 3\n' >"$out/euler-trail.el"
    printf '0 1\n1 2\n2 0\n0 3\n' >"$out/euler-arcs.el"
    # NAME[+ if wide: also on more than 2 ranks]:FLAGS
    local -a cases=(
        "trail+:--input $out/euler-trail.el --trail"
        "directed-trail:--input $out/euler-arcs.el --directed --trail"
        "complete:--generator complete --vertices 9"
        "hypercube:--generator hypercube --d 6"
        "square-random:--generator lattice --dims 7,5 --pairing random"
        "square-straight+:--generator lattice --dims 256,256 --pairing straight"
        "triangular:--generator lattice --dims 4,6 --triangular"
        "cubic-straight:--generator lattice --dims 3,4,5 --pairing straight"
        "union-adjacency+:--generator union-cycles --vertices 100000 --k 2"
        "union-random+:--generator union-cycles --vertices 100000 --k 3 --pairing random"
        "union-random-mpi+:--generator union-cycles --vertices 100000 --k 3 --pairing random --gpu-transport mpi"
        "cycles:--generator random-cycles --vertices 4000 --edges 200000 --k 4"
        "cycles-random+:--generator random-cycles --vertices 4000 --edges 200000 --k 4 --pairing random"
        "de-bruijn+:--generator de-bruijn --alphabet 3 --word 6"
        "kronecker-eulerized+:--scale 12 --eulerize"
    )
    euler_header
    for case in "${cases[@]}"; do
        name=${case%%:*}
        wide=0
        [[ $name == *+ ]] && wide=1 && name=${name%+}
        read -r -a args <<<"${case#*:}"
        run_tessera "euler-$name-cpu" 1 euler --device cpu "${args[@]}" || continue
        pairs=()
        run_tessera "euler-$name-gpu" 1 euler --device gpu "${args[@]}" &&
            pairs+=("euler-$name-cpu:euler-$name-gpu")
        several=("${args[@]}")
        [[ " ${args[*]} " == *" --gpu-transport "* ]] || several+=("${shared_transport[@]}")
        for np in "${ranks[@]}"; do
            ((np > 2 && !wide)) && continue
            run_tessera "euler-$name-gpu-np$np" "$np" euler --device gpu "${several[@]}" &&
                pairs+=("euler-$name-cpu:euler-$name-gpu-np$np")
        done
        euler_rows "${pairs[@]}" || status=1
    done
    # Two triangles: the connectivity check fails, and the CPU's names the components; a path
    # of two edges: two odd vertices, named by the host from the devices' degrees.
    printf '0 1\n1 2\n2 0\n3 4\n4 5\n5 3\n' >"$out/euler-two-pieces.el"
    printf '0 1\n1 2\n' >"$out/euler-odd.el"
    for np in 1 2; do
        euler_refused two-pieces "$np" "not Eulerian: edges lie in 2 components" "${shared_transport[@]}"
        euler_refused odd "$np" "not Eulerian: 2 of 3 vertices have odd degree" "${shared_transport[@]}"
    done
    run_tessera "euler-timing-adjacency" 1 euler --device gpu --generator union-cycles \
        --vertices "$timing" --k 2 --hierholzer --write-circuit false || true
    run_tessera "euler-timing-random" 1 euler --device gpu --generator union-cycles \
        --vertices "$timing" --k 2 --pairing random --write-circuit false || true
    python3 - "$out" <<'PY' || status=1
import sys, h5py
out, bad = sys.argv[1], 0
for name in ("euler-timing-adjacency", "euler-timing-random"):
    try:
        a = h5py.File(f"{out}/{name}.h5")["euler"].attrs
    except OSError as e:
        print(f"{name}: missing result ({e})"); bad += 1; continue
    phases = " ".join(f"{p} {a[p + '_seconds']:.3f}" for p in ("check", "pair", "label", "tree", "splice", "rank"))
    h = a.get("hierholzer_seconds", float("nan"))
    solve = a["num_edges"] / a["edges_per_second"]
    print(f"{name}: {int(a['num_edges'])} edges, {a['edges_per_second']:.3e} edges/s, {int(a['initial_trails'])} trails; "
          f"{phases}; hierholzer {h:.3f} s ({h / solve:.2f}x); valid {int(a['valid'])}", flush=True)
sys.exit(1 if bad else 0)
PY
}

# A graph that is not Eulerian must stop on NP ranks with the line MESSAGE starts (further
# arguments passed on to tessera).
euler_refused() {
    local name=$1 np=$2 message=$3
    shift 3
    local log="$out/euler-$name-np$np.log"
    if mpirun --oversubscribe -np "$np" "$bin" euler --device gpu --input "$out/euler-$name.el" \
        --output "$out/euler-$name.h5" "$@" >"$log" 2>&1 || ! grep -q "$message" "$log"; then
        echo "FAILED: euler-$name on $np ranks should stop with '$message' (log: $log)"
        status=1
    else
        echo "euler-$name, $np ranks: not Eulerian, as expected: $(grep -o 'not Eulerian.*' "$log" | head -1)"
    fi
}

euler_header() {
    printf '%-26s %9s %7s %18s %5s %5s %11s %11s\n' case edges trails checksum same valid \
        "cpu edges/s" "gpu edges/s"
}

# One row per REF:NAME pair (the GPU run NAME against the CPU run REF); fails on any difference.
euler_rows() {
    python3 - "$out" "$@" <<'PY'
import sys, h5py
out, pairs = sys.argv[1], sys.argv[2:]
bad = 0
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
          f"{'yes' if same else 'NO':>5} {'yes' if g['valid'] == 1 else 'NO':>5} {r['edges_per_second']:>11.3e} {g['edges_per_second']:>11.3e}",
          flush=True)
sys.exit(1 if bad else 0)
PY
}
