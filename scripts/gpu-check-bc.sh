# shellcheck shell=bash
# scripts/gpu-check-bc.sh: sourced by scripts/gpu-check, which defines $bin, $out, the GPU
# counts `counts` and `status`; defines check_bc, which sets status=1 on any difference or
# failed run.
#
# Betweenness (`tessera bc`) and SSCA#2 (`tessera ssca2`, kernels 1-4) on one GPU and on
# every GPU present (one rank per GPU), both distributions (`replicate` full and distributed;
# distributed on several GPUs through NCCL and through MPI, and on a host of one GPU as 2
# ranks sharing it through MPI), against the CPU (np 1, and np 2 distributed): the BC
# checksum (every vertex's 128-bit fixed-point sum), the sources, the 100 largest values,
# the maximum-weight arcs and the subgraph sizes must be equal bit for bit. GPU runs build the
# graph on the GPU (kernel 1, `arcs_gpu`), but for the case `ssca2-14-k1cpu` (built on the
# CPU: the sweeps alone against the CPU's). Then timings on one GPU (GPU_CHECK_BC_TIMINGS=0
# skips them): SSCA#2 (K4approx 10) at SCALE GPU_CHECK_SSCA2_SCALES ("20 22 24") and bc from
# 64 sources on Kronecker SCALE GPU_CHECK_BC_SCALES ("20 22"), each line printed as its run
# ends, and bc at SCALE 20 on the host's cores where 20 is among them.

bc_cases=(
    "bc-kron16|bc --scale 16 --sources 64"
    "bc-torus|bc --generator lattice --dims 32,32 --exact"
    "bc-ssca2-directed|bc --generator ssca2 --scale 14 --sources 100 --parallel-paths"
    "ssca2-14|ssca2 --scale 14 --k4approx 8"
    "ssca2-14-k1cpu|ssca2 --scale 14 --k4approx 8 --construction cpu"
)

check_bc() {
    local case name np pairs=()
    local -a flags
    for case in "${bc_cases[@]}"; do
        name=${case%%|*}
        read -r -a flags <<<"${case#*|}"
        run_tessera "$name-cpu" 1 "${flags[@]}" --device cpu --replicate full || continue
        run_tessera "$name-cpu-dist" 2 "${flags[@]}" --device cpu --replicate distributed &&
            pairs+=("$name-cpu:$name-cpu-dist")
        for np in "${counts[@]}"; do
            run_tessera "$name-gpu-np$np" "$np" "${flags[@]}" --device gpu --replicate full &&
                pairs+=("$name-cpu:$name-gpu-np$np")
            run_tessera "$name-gpu-dist-np$np" "$np" "${flags[@]}" --device gpu --replicate distributed &&
                pairs+=("$name-cpu:$name-gpu-dist-np$np")
            if ((np > 1)); then
                run_tessera "$name-gpu-dist-np$np-mpi" "$np" "${flags[@]}" --device gpu \
                    --replicate distributed --gpu-transport mpi && pairs+=("$name-cpu:$name-gpu-dist-np$np-mpi")
            fi
        done
        for np in "${shared[@]}"; do
            run_tessera "$name-gpu-dist-np$np-shared" "$np" "${flags[@]}" --device gpu \
                --replicate distributed --gpu-transport mpi && pairs+=("$name-cpu:$name-gpu-dist-np$np-shared")
        done
    done
    echo
    python3 - "$out" "${pairs[@]}" <<'PY' || status=1
import sys, h5py, numpy as np
out, pairs = sys.argv[1], sys.argv[2:]
bad = 0
print(f"{'run':<32} {'ranks':>5} {'sources':>7} {'bc_max':>14} {'seconds':>9} {'checksum':>8} {'top':>5} {'ssca2':>5}  result")
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
              f"{'same' if kernels else 'DIFF':>5}  {'ok' if ok else 'FAIL'}")
sys.exit(1 if bad else 0)
PY
    [[ ${GPU_CHECK_BC_TIMINGS:-1} == 0 ]] && return 0
    echo
    echo "bc timings (one GPU; cpu: every core of the host, one rank):"
    local scale ssca2_scales bc_scales
    read -r -a ssca2_scales <<<"${GPU_CHECK_SSCA2_SCALES:-20 22 24}"
    read -r -a bc_scales <<<"${GPU_CHECK_BC_SCALES:-20 22}"
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
