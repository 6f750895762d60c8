# shellcheck shell=bash
# Spin models for scripts/gpu-check (sourced there; it defines $bin, $out, counts, shared and
# status). check_spin: `tessera spin` on the CPU (one rank, the reference) and on one GPU, on
# every GPU present, and as the `shared` rank counts on one GPU (--gpu-transport mpi), by
# checkerboard Metropolis, Swendsen-Wang and Wolff, two beta each, $GPU_CHECK_SPIN_SWEEPS (40)
# sweeps measured every 4, configurations written, on: 2D Ising at $GPU_CHECK_SPIN_L2 = 192
# (Metropolis multi-spin coded: L a multiple of 64, three words per row and colour), 2D Ising
# at L = 66 from a hot start (Metropolis on the byte kernel), 3D Ising at $GPU_CHECK_SPIN_L3I
# = 64 from a hot start (multi-spin coded in 3D) and 3D 3-state Potts at $GPU_CHECK_SPIN_L3 =
# 16 (hot start): every measurement and the last spins of every chain must equal the CPU
# run's bit for bit. Then timing rows on one GPU, 2D Ising at T_c, cold start: Metropolis
# (multi-spin coded) spin flips per ns at each L of $GPU_CHECK_SPIN_TIMING_L ("16384 65536";
# $GPU_CHECK_SPIN_SWEEPS_16K = 400 sweeps up to 16384, ..._64K = 40 above), Swendsen-Wang ns
# per spin per sweep at $GPU_CHECK_SPIN_SW_L = 16384 ($GPU_CHECK_SPIN_SWEEPS_SW = 40 sweeps),
# and Wolff cluster flips per ns at $GPU_CHECK_SPIN_WOLFF_L = 1024
# ($GPU_CHECK_SPIN_SWEEPS_WOLFF = 400 clusters); the time is the sweeps' (halo exchanges
# included; measurements excluded). Prints a table; sets status=1 on any difference or failed
# run.
# spin_compare PAIRS...: one row per CPU:GPU pair, the header before the section's first row;
# returns 1 on any difference.
spin_compare() {
    python3 - "$out" "${spin_header:-1}" "$@" <<'PY'
import sys, h5py, numpy as np
out, header, pairs = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
bad = 0
if header:
    print(f"{'run':<44} {'gpus':>4} {'L':>5} {'e (last beta)':>14} {'series':>6} {'spins':>6}  result")
for pair in pairs:
    ref_name, name = pair.split(":")
    with h5py.File(f"{out}/{ref_name}.h5") as rf, h5py.File(f"{out}/{name}.h5") as gf:
        r, g = rf["spin"], gf["spin"]
        series = all(np.array_equal(r[k][:], g[k][:], equal_nan=True) for k in ("energy", "m"))
        spins = np.array_equal(r["configuration"][:], g["configuration"][:])
        ok = series and spins
        bad += not ok
        e = g["summary/energy"][-1]
        print(f"{name:<44} {int(gf.attrs['ranks']):>4} {int(g.attrs['l']):>5} {e:>14.6f} "
              f"{'same' if series else 'DIFF':>6} {'same' if spins else 'DIFF':>6}  {'ok' if ok else 'FAIL'}",
              flush=True)
sys.exit(1 if bad else 0)
PY
}

# spin_timing NAMES...: the timing rows.
spin_timing() {
    python3 - "$out" "$@" <<'PY'
import sys, h5py
out, timing = sys.argv[1], sys.argv[2:]
for name in timing:
    with h5py.File(f"{out}/{name}.h5") as f:
        g = f["spin"]
        rate = g["summary/flips_per_ns"][0]
        sweeps = int(g["sweeps_timed"][0])
        secs = g["update_seconds"][0]
        update = g.attrs["update"]
        update = update.decode() if isinstance(update, bytes) else str(update)
        what = {"metropolis": f"{rate:.1f} spin flips/ns",
                "wolff": f"{rate:.4f} cluster flips/ns ({rate * 1e9:.3e} per s; "
                         f"mean cluster {g['summary/mean_cluster_size'][0]:.0f} sites)"}.get(
            update, f"{1 / rate:.4f} ns per spin per sweep")
        print(f"timing: 2D Ising {update} L = {int(g.attrs['l'])} at T_c on {f.attrs['device']}: "
              f"{what} ({sweeps} sweeps in {secs:.3f} s; e = {g['summary/energy'][0]:.5f})")
PY
}

check_spin() {
    local l2=${GPU_CHECK_SPIN_L2:-192} l3=${GPU_CHECK_SPIN_L3:-16} l3i=${GPU_CHECK_SPIN_L3I:-64}
    local sweeps=${GPU_CHECK_SPIN_SWEEPS:-40}
    local pairs model update name np spin_header=1
    echo
    _spin() { # NAME NP DEVICE ARGS...
        local name=$1 np=$2 device=$3
        shift 3
        run_tessera "$name" "$np" spin --device "$device" "$@"
    }
    for model in ising-2d ising-2d-bytes ising-3d potts-3d; do
        for update in metropolis swendsen-wang wolff; do
            local args=(--update "$update" --equilibration 0 --sweeps "$sweeps" --measure-every 4
                --write-configuration)
            case $model in
            ising-2d) args+=(--lattice 2d --l "$l2" --beta 0.42,0.46) ;;
            ising-2d-bytes) args+=(--lattice 2d --l 66 --beta 0.42,0.46 --start hot) ;;
            ising-3d) args+=(--lattice 3d --l "$l3i" --beta 0.2,0.24 --start hot) ;;
            potts-3d) args+=(--lattice 3d --l "$l3" --model potts --q 3 --beta 0.5,0.6 --start hot) ;;
            esac
            name="spin-$model-$update"
            _spin "$name-cpu" 1 cpu "${args[@]}" || continue
            pairs=()
            for np in "${counts[@]}"; do
                _spin "$name-gpu-np$np" "$np" gpu "${args[@]}" && pairs+=("$name-cpu:$name-gpu-np$np")
            done
            for np in "${shared[@]}"; do
                _spin "$name-gpu-np$np-shared" "$np" gpu --gpu-transport mpi "${args[@]}" &&
                    pairs+=("$name-cpu:$name-gpu-np$np-shared")
            done
            ((${#pairs[@]})) || continue
            spin_compare "${pairs[@]}" || status=1
            spin_header=0
        done
    done
    local timing=() l s sizes
    read -r -a sizes <<<"${GPU_CHECK_SPIN_TIMING_L:-16384 65536}"
    for l in "${sizes[@]}"; do
        s=${GPU_CHECK_SPIN_SWEEPS_16K:-400}
        ((l > 16384)) && s=${GPU_CHECK_SPIN_SWEEPS_64K:-40}
        _spin "spin-timing-metropolis-l$l" 1 gpu --l "$l" --equilibration 0 --sweeps "$s" \
            --measure-every "$s" && timing+=("spin-timing-metropolis-l$l")
    done
    l=${GPU_CHECK_SPIN_SW_L:-16384} s=${GPU_CHECK_SPIN_SWEEPS_SW:-40}
    _spin "spin-timing-sw-l$l" 1 gpu --l "$l" --update swendsen-wang --equilibration 0 \
        --sweeps "$s" --measure-every "$s" && timing+=("spin-timing-sw-l$l")
    l=${GPU_CHECK_SPIN_WOLFF_L:-1024} s=${GPU_CHECK_SPIN_SWEEPS_WOLFF:-400}
    _spin "spin-timing-wolff-l$l" 1 gpu --l "$l" --update wolff --equilibration 0 \
        --sweeps "$s" --measure-every "$s" && timing+=("spin-timing-wolff-l$l")
    if ((${#timing[@]})); then spin_timing "${timing[@]}" || status=1; fi
}
