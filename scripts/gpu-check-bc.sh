# shellcheck shell=bash
# scripts/gpu-check-bc.sh: sourced by scripts/gpu-check, which defines $bin, $out, the GPU
# counts `counts` and `status`; defines check_bc, which sets status=1 on any difference or
# failed run.
#
# Betweenness (`tessera bc`) and SSCA#2 (`tessera ssca2`, kernels 1-4) against the CPU (one
# rank): on one GPU (replicate full), on all GPUs present (one rank per GPU; full, and
# distributed through NCCL), for bc-kron16 also distributed on 2 GPUs and through MPI (on a
# host of one GPU: 2 ranks sharing it); the BC checksum (every vertex's 128-bit fixed-point
# sum), the sources, the 100 largest values, the maximum-weight arcs and the subgraph sizes
# must be equal bit for bit. GPU runs build the graph on the GPU (kernel 1, `arcs_gpu`), and
# `ssca2-14` once more on the CPU (`gpu-np1-k1cpu`: the sweeps alone against the CPU's). The
# distributions' equality across rank counts on the CPU is the CI tests' (tests/cli/bc.rs).
# Then timings on one GPU (GPU_CHECK_BC_TIMINGS=0 skips them): SSCA#2 (K4approx 10) at SCALE
# GPU_CHECK_SSCA2_SCALES ("20") and bc from 64 sources on Kronecker SCALE
# GPU_CHECK_BC_SCALES ("20"), each line printed as its run ends, and bc at SCALE 20 on the
# host's cores where 20 is among them.

# Cases: NAME|FLAGS|WIDE, WIDE = 1 where the case also runs on 2 GPUs and through MPI. Each
# case's rows print as soon as its runs end.
bc_cases=(
    "bc-kron16|bc --scale 16 --sources 64|1"
    "bc-torus|bc --generator lattice --dims 32,32 --exact|0"
    "bc-ssca2-directed|bc --generator ssca2 --scale 14 --sources 100 --parallel-paths|0"
    "ssca2-14|ssca2 --scale 14 --k4approx 8|0"
)

check_bc() {
    local case name wide all=${counts[-1]} pairs
    local -a flags
    bc_compare --header
    for case in "${bc_cases[@]}"; do
        IFS='|' read -r name _ wide <<<"$case"
        read -r -a flags <<<"$(cut -d'|' -f2 <<<"$case")"
        pairs=()
        run_tessera "$name-cpu" 1 "${flags[@]}" --device cpu --replicate full || continue
        bc_run pairs "$name" gpu-np1 1 "${flags[@]}" --replicate full
        if ((all > 1)); then
            bc_run pairs "$name" "gpu-np$all" "$all" "${flags[@]}" --replicate full
            bc_run pairs "$name" "gpu-dist-np$all" "$all" "${flags[@]}" --replicate distributed
        else
            bc_run pairs "$name" gpu-dist-np1 1 "${flags[@]}" --replicate distributed
        fi
        if ((wide)); then
            ((all > 2)) && bc_run pairs "$name" gpu-dist-np2 2 "${flags[@]}" --replicate distributed
            # Through MPI: across the GPUs, or 2 ranks sharing the one GPU (NCCL wants a GPU
            # per rank).
            bc_run pairs "$name" "gpu-dist-np$((all > 1 ? all : 2))-mpi" "$((all > 1 ? all : 2))" \
                "${flags[@]}" --replicate distributed --gpu-transport mpi
        fi
        # Kernel 1 on the CPU: the sweeps alone against the CPU's.
        [[ $name == ssca2-14 ]] &&
            bc_run pairs "$name" gpu-np1-k1cpu 1 "${flags[@]}" --replicate full --construction cpu
        bc_compare "${pairs[@]}" || status=1
    done
    [[ ${GPU_CHECK_BC_TIMINGS:-1} == 0 ]] && return 0
    echo
    echo "bc timings (one GPU; cpu: every core of the host, one rank):"
    local scale ssca2_scales bc_scales
    read -r -a ssca2_scales <<<"${GPU_CHECK_SSCA2_SCALES:-20}"
    read -r -a bc_scales <<<"${GPU_CHECK_BC_SCALES:-20}"
    for scale in "${ssca2_scales[@]}"; do
        run_tessera "time-ssca2-s$scale" 1 ssca2 --scale "$scale" --device gpu &&
            bc_timing "time-ssca2-s$scale"
    done
    for scale in "${bc_scales[@]}"; do
        run_tessera "time-bc-s$scale" 1 bc --scale "$scale" --sources 64 --device gpu &&
            bc_timing "time-bc-s$scale"
    done
    if [[ " ${bc_scales[*]} " == *" 20 "* ]]; then
        run_tessera time-bc-s20-cpu 1 bc --scale 20 --sources 64 --device cpu && bc_timing time-bc-s20-cpu
    fi
    return 0
}

# bc_run PAIRS NAME SUFFIX NP ARGS...: case NAME on the GPU as NAME-SUFFIX on NP ranks; the
# array named PAIRS gains its comparison with NAME-cpu where it ran.
bc_run() {
    local -n into=$1
    local name=$2 suffix=$3 np=$4
    shift 4
    run_tessera "$name-$suffix" "$np" "$@" --device gpu && into+=("$name-cpu:$name-$suffix")
    return 0
}

# bc_compare [--header | PAIR...]: one row per REF:RUN pair (checksum, sources and top 100,
# SSCA#2's kernels 2 and 3 equal bit for bit); fails where any differs.
bc_compare() {
    python3 - "$out" "$@" <<'PY'
import sys, h5py, numpy as np
out, pairs = sys.argv[1], sys.argv[2:]
if pairs == ["--header"]:
    print(f"{'run':<32} {'ranks':>5} {'sources':>7} {'bc_max':>14} {'seconds':>9} {'checksum':>8} {'top':>5} {'ssca2':>5}  result")
    sys.exit(0)
bad = 0
for pair in pairs:
    ref_name, name = pair.split(":")
    with h5py.File(f"{out}/{ref_name}.h5") as rf, h5py.File(f"{out}/{name}.h5") as gf:
        group = "ssca2" if "ssca2" in rf else "bc"
        r, g = rf[group], gf[group]
        same_sum = r.attrs["bc_checksum"] == g.attrs["bc_checksum"]
        same_top = all(np.array_equal(r[d][:], g[d][:]) for d in ("bc_sources", "bc_top_vertex", "bc_top"))
        kernels = group != "ssca2" or all(np.array_equal(r[d][:], g[d][:])
                                          for d in ("max_weight_start", "max_weight_end", "subgraph_vertices"))
        ok = same_sum and same_top and kernels
        bad += not ok
        secs = g.attrs["kernel4_time" if group == "ssca2" else "bc_time"]
        print(f"{name:<32} {int(gf.attrs['ranks']):>5} {int(g.attrs['sources']):>7} {float(g.attrs['bc_max']):>14.6f} "
              f"{float(secs):>9.4f} {'same' if same_sum else 'DIFF':>8} {'same' if same_top else 'DIFF':>5} "
              f"{'same' if kernels else 'DIFF':>5}  {'ok' if ok else 'FAIL'}", flush=True)
sys.exit(1 if bad else 0)
PY
}

bc_timing() { # NAME: one line of a timing run's figures
    python3 - "$out/$1.h5" <<'PY' || true
import sys, os, h5py
path = sys.argv[1]
with h5py.File(path) as f:
    name = os.path.basename(path)[:-3]
    phases = " ".join(f"{k} {float(v):.2f}" for k, v in f["phases"].attrs.items())
    if "ssca2" in f:
        a = f["ssca2"].attrs
        print(f"{name:<18} K1 {a['kernel1_time']:.3f} s  K2 {a['kernel2_time']:.4f} s  K3 {a['kernel3_time']:.4f} s  "
              f"K4 {a['kernel4_time']:.3f} s  {a['k4_teps']:.3e} TEPS  lanes {int(a['lanes'])}  [{phases}]")
    else:
        a = f["bc"].attrs
        print(f"{name:<18} bc {a['bc_time']:.3f} s  setup {a['bc_setup_time']:.2f} s  "
              f"{a['traversed_arcs_per_second']:.3e} arcs/s  arcs {int(a['arcs'])}  "
              f"levels {int(a['deepest_level'])}  lanes {int(a['lanes'])}  [{phases}]")
    sweeps = " ".join(f"{k[3:-5]} {float(v):.3f}" for k, v in a.items()
                      if k.startswith("bc_") and k.endswith("_time") and k not in ("bc_time", "bc_setup_time"))
    if sweeps:
        print(f"{'':<18} GPU seconds per sweep phase: {sweeps}")
PY
}
