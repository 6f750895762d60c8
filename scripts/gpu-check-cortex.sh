# shellcheck shell=bash
# Cortex for scripts/gpu-check (sourced there; it defines $bin, $out, counts and status; on
# its own: `GPU_CHECK_PARTS=cortex scripts/gpu-check`).
# check_cortex: `tessera cortex` on the CPU (one rank, the reference) and on one GPU and on
# every GPU present (on a host of one GPU, also 2 ranks sharing it through MPI): the raster,
# the pseudo-EEG and both rates must be the same bits as the CPU's, for the exp synapses with
# the seed's integration over 10^4 steps at N = 2^14 (L = 128, k = 100, r = 16), and for the
# table synapses with Izhikevich's half steps and a drug schedule over 2000 steps. Then the
# benchmark rows: neuron updates/s and synapse visits/s on one GPU for both synapse schemes
# at N = 2^20 and 2^24 (k = 100, r = 64; $GPU_CHECK_CORTEX_BENCH_STEPS steps at 2^20,
# default 2048, half of them at 2^24). On a host of several GPUs, weak scaling: 2^24 neurons
# per GPU (L = 4096·sqrt(P), exp synapses, 1024 steps, phases timed) on 1, 2, 4, ... GPUs up
# to those present, with the halo exchange's time and the part of it not hidden.
# cortex_pair_row REF NAME: NAME's raster and pseudo-EEG against REF's (the CPU's), one row.
cortex_pair_row() {
    python3 - "$out" "$1" "$2" <<'PY' || status=1
import sys, h5py, numpy as np
out, ref_name, name = sys.argv[1:]
series = ["eeg", "rate_exc", "rate_inh", "raster/step", "raster/id"]
with h5py.File(f"{out}/{ref_name}.h5") as rf, h5py.File(f"{out}/{name}.h5") as gf:
    r, g = rf["cortex"], gf["cortex"]
    same = {k: np.array_equal(r[k][:], g[k][:]) for k in series}
    raster = same["raster/step"] and same["raster/id"]
    eeg = same["eeg"] and same["rate_exc"] and same["rate_inh"]
    ok = raster and eeg
    print(f"{name:<26} {int(gf.attrs['ranks']):>5} {len(g['eeg']):>6} {len(g['raster/id']):>9} "
          f"{g['rate_exc'][:].mean():>7.3f} {g['eeg'][:].mean():>8.3f} {'same' if raster else 'DIFF':>6} "
          f"{'same' if eeg else 'DIFF':>5}  {'ok' if ok else 'FAIL'}", flush=True)
sys.exit(0 if ok else 1)
PY
}

# cortex_bench_row NAME: one benchmark run's rates.
cortex_bench_row() {
    python3 - "$out" "$1" <<'PY' || status=1
import sys, h5py
out, name = sys.argv[1:]
with h5py.File(f"{out}/{name}.h5") as f:
    g = f["cortex"]
    syn = g.attrs["synapses"]
    syn = syn.decode() if isinstance(syn, bytes) else syn
    print(f"{name:<26} {int(g.attrs['neurons']):>9} {syn:>8} {g.attrs['neuron_updates_per_s']:>10.3e} "
          f"{g.attrs['synapse_visits_per_s']:>10.3e} {g.attrs['wall_per_biological_s']:>11.4f} "
          f"{g['rate_exc'][:].mean():>7.2f}  ({f.attrs['device']})", flush=True)
PY
}

# cortex_weak_row BASE NAME: one weak-scaling run, its efficiency against BASE (the 1-GPU run).
cortex_weak_row() {
    python3 - "$out" "$1" "$2" <<'PY' || status=1
import sys, h5py
out, base_name, name = sys.argv[1:]
with h5py.File(f"{out}/{base_name}.h5") as f:
    base = f["cortex"].attrs["neuron_updates_per_s"]
with h5py.File(f"{out}/{name}.h5") as f:
    g, t = f["cortex"], f["cortex/timing"]
    p = int(f.attrs["ranks"])
    rate = g.attrs["neuron_updates_per_s"]
    s = {k: t[k][:].sum() for k in ["neurons", "inner", "exchange", "exposed", "border", "step"]}
    print(f"{name:<22} {p:>4} {int(g.attrs['neurons']) // p:>11} {rate:>10.3e} {rate / p:>10.3e} "
          f"{rate / p / base:>5.2f} {s['neurons']:>9.3f} {s['inner']:>8.3f} {s['exchange']:>7.3f} "
          f"{s['exposed']:>8.3f} {s['border']:>8.3f} {s['step']:>7.3f}", flush=True)
PY
}

check_cortex() {
    local bench_steps=${GPU_CHECK_CORTEX_BENCH_STEPS:-2048}
    local np name
    printf '0 SET_E.BASE_I 3.0\n50 SET_BOOST_I 0.1\n100 SET_BOOST_I 0.0\n800 SET_E.LAMBDA_TAU 3.0\n1400 SET_E.LAMBDA_TAU 1.0\n' \
        >"$out/cortex-drug.txt"
    local exp_args=(--l 128 --k 100 --r 16 --steps 10000 --raster)
    local table_args=(--l 128 --k 100 --r 16 --steps 2000 --raster --synapses table
        --integration half-step --schedule-file "$out/cortex-drug.txt")
    printf '%-26s %5s %6s %9s %7s %8s %6s %5s  result\n' run ranks steps spikes 'exc Hz' 'EEG mV' raster eeg
    for case in exp table; do
        local -n args="${case}_args"
        run_tessera "cortex-$case-cpu" 1 cortex --device cpu "${args[@]}" || continue
        for np in "${counts[@]}" "${shared[@]}"; do
            local transport=()
            ((np > ${gpus:-1})) && transport=(--gpu-transport mpi)
            name="cortex-$case-gpu-np$np"
            run_tessera "$name" "$np" cortex --device gpu "${transport[@]}" "${args[@]}" &&
                cortex_pair_row "cortex-$case-cpu" "$name"
        done
    done
    echo
    printf '%-26s %9s %8s %10s %10s %11s %7s\n' benchmark neurons synapses updates/s visits/s 's per bio s' 'exc Hz'
    for l in 1024 4096; do
        local steps=$bench_steps
        ((l > 1024)) && steps=$((bench_steps / 2))
        for syn in exp table; do
            name="cortex-bench-$syn-l$l"
            run_tessera "$name" 1 cortex --device gpu --l "$l" --k 100 --r 64 --synapses "$syn" \
                --steps "$steps" && cortex_bench_row "$name"
        done
    done
    ((${gpus:-1} > 1)) || return 0
    echo
    printf '%-22s %4s %11s %10s %10s %5s %9s %8s %7s %8s %8s %7s\n' 'weak scaling' GPUs neurons/GPU updates/s \
        'per GPU' eff 'neurons s' 'inner s' 'exch s' exposed 'border s' 'step s'
    for ((np = 1; np <= ${gpus:-1}; np *= 2)); do
        local l
        l=$(python3 -c "import math; print(2 * round(2048 * math.sqrt($np)))")
        name="cortex-weak-np$np"
        run_tessera "$name" "$np" cortex --device gpu --l "$l" --k 100 --r 64 --steps 1024 \
            --timing && cortex_weak_row cortex-weak-np1 "$name"
    done
}
