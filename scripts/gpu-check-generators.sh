# shellcheck shell=bash
# scripts/gpu-check-generators.sh: sourced by scripts/gpu-check, which defines $bin, $out,
# the GPU counts `counts` and `status`; defines check_generators, which sets status=1 on any
# difference or failed run.
#
# Every generator at about 2^20 edges (3·2^18 on the WS torus): `tessera generate` on the CPU
# (np 1, the reference), then on the GPU (edges generated there, construction gpu) on one GPU
# and on every GPU present. The /graph edge_checksum (the edges as generated) and
# csr_checksum (kernel 1's CSR) must equal the CPU run's. The table shows the GPU's
# generation rate (edges_per_second: the checksum pass over the edges), the CPU's, and where
# the edges were generated and the CSR built. A case named -cpu (a generator without a GPU
# edge function, none at present) runs with construction auto: its edges and CSR are made on
# the CPU, which its row says. Erdős–Rényi's chunks come in both forms: sparse (drawn slots) and, on 100
# vertices, more than half full (the complement of the drawn slots); its split tree is
# descended on the GPU below the level where a rank's window reaches 1024 nodes (3 levels
# of 13 at 2^24 edges on one GPU, 1 on four), on the host above.

# NAME|flags of each case; the GPU runs add --construction gpu unless the name ends in -cpu.
generator_cases=(
    "kronecker|--generator kronecker --scale 16 --edgefactor 16"
    "ssca2|--generator ssca2 --scale 17"
    "barabasi-albert|--generator barabasi-albert --vertices 262144 --d 4"
    "ws-ring|--generator watts-strogatz --vertices 131072 --k 16 --p 0.1"
    "ws-torus|--generator watts-strogatz --dims 64,64,64 --p 0.1"
    "lattice-2d|--generator lattice --dims 1024,512"
    "lattice-3d-open|--generator lattice --dims 128,64,43 --periodic false"
    "erdos-renyi|--generator erdos-renyi --vertices 65536 --edges 1048576"
    "erdos-renyi-large|--generator erdos-renyi --vertices 4194304 --edges 16777216"
    "erdos-renyi-dense|--generator erdos-renyi --vertices 100 --edges 4000"
)

generators_run() { # NAME NP DEVICE FLAGS...
    local name=$1 np=$2 device=$3
    shift 3
    run_tessera "$name" "$np" generate --device "$device" "$@"
}

# generators_compare PAIRS...: one row per CPU:GPU pair (the header before the first row of the
# section); returns 1 on any difference.
generators_compare() {
    python3 - "$out" "${generators_header:-1}" "$@" <<'PY'
import sys, h5py
out, header, pairs = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
bad = 0
if header:
    print(f"{'generator':<18} {'gpus':>4} {'edges':>9} {'gpu edges/s':>12} {'cpu edges/s':>12} {'made':<4} {'built':<5} {'edges':>5} {'csr':>5}  result")
for pair in pairs:
    ref_name, name = pair.split(":")
    with h5py.File(f"{out}/{ref_name}.h5") as rf, h5py.File(f"{out}/{name}.h5") as gf:
        r, g = rf["graph"].attrs, gf["graph"].attrs
        same_edges = r["edge_checksum"] == g["edge_checksum"]
        same_csr = r["csr_checksum"] == g["csr_checksum"]
        ok = same_edges and same_csr
        bad += not ok
        label = name[len("gen-"):name.rindex("-gpu-")]
        print(f"{label:<18} {int(gf.attrs['ranks']):>4} {int(g['edges']):>9} {float(g['edges_per_second']):>12.4g} "
              f"{float(r['edges_per_second']):>12.4g} {text(g['generate_device']):<4} {text(g['construction_device']):<5} "
              f"{'same' if same_edges else 'DIFF':>5} {'same' if same_csr else 'DIFF':>5}  {'ok' if ok else 'FAIL'}", flush=True)
sys.exit(1 if bad else 0)
PY
}

# Each case's rows print as soon as its runs end, so a section cut by a time limit still shows
# what it compared.
check_generators() {
    local case name np construction pairs generators_header=1
    local -a flags
    echo
    for case in "${generator_cases[@]}"; do
        name=${case%%|*}
        read -r -a flags <<<"${case#*|}"
        construction=gpu
        [[ $name == *-cpu ]] && construction=auto
        generators_run "gen-$name-cpu" 1 cpu "${flags[@]}" || continue
        pairs=()
        for np in "${counts[@]}"; do
            generators_run "gen-$name-gpu-np$np" "$np" gpu --construction "$construction" "${flags[@]}" &&
                pairs+=("gen-$name-cpu:gen-$name-gpu-np$np")
        done
        ((${#pairs[@]})) || continue
        generators_compare "${pairs[@]}" || status=1
        generators_header=0
    done
}
