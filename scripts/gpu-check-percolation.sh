# shellcheck shell=bash
# Percolation for scripts/gpu-check (sourced there; it defines $bin, $out, counts and status).
# check_percolation: `tessera percolation` on the CPU (one rank, the reference) and on one GPU
# and on every GPU present, for 2D and 3D, periodic and open, site and bond, at a small L
# ($GPU_CHECK_PERCOLATION_L2 = 96 in 2D, $GPU_CHECK_PERCOLATION_L3 = 24 in 3D), three p
# around the threshold and 8 samples each, labels written: every per-sample figure and every
# label must equal the CPU run's. Then one timing row: 2D site percolation at p = 0.5927 on
# one GPU at L = $GPU_CHECK_PERCOLATION_TIMING_L (32768), 5 samples; "ns/site" is the median
# labelling time per site (local labelling, boundary graph, relabelling; draw and statistics
# excluded). Prints a table; sets status=1 on any difference or failed run.
check_percolation() {
    local l2=${GPU_CHECK_PERCOLATION_L2:-96} l3=${GPU_CHECK_PERCOLATION_L3:-24}
    local timing_l=${GPU_CHECK_PERCOLATION_TIMING_L:-32768}
    local pairs=() lattice kind boundary l p name np
    _percolation() { # NAME NP DEVICE ARGS...
        local name=$1 np=$2 device=$3
        shift 3
        run_tessera "$name" "$np" percolation --device "$device" "$@"
    }
    for lattice in 2d 3d; do
        for kind in site bond; do
            for boundary in periodic open; do
                case $lattice-$kind in
                2d-site) p=0.55,0.5927,0.65 l=$l2 ;;
                2d-bond) p=0.45,0.5,0.55 l=$l2 ;;
                3d-site) p=0.28,0.3116,0.34 l=$l3 ;;
                3d-bond) p=0.22,0.2488,0.28 l=$l3 ;;
                esac
                name="percolation-$lattice-$kind-$boundary"
                local args=(--lattice "$lattice" --kind "$kind" --boundary "$boundary" --l "$l"
                    --p "$p" --samples 8 --write-labels)
                _percolation "$name-cpu" 1 cpu "${args[@]}" || continue
                for np in "${counts[@]}" "${shared[@]}"; do
                    _percolation "$name-gpu-np$np" "$np" gpu "${args[@]}" &&
                        pairs+=("$name-cpu:$name-gpu-np$np")
                done
            done
        done
    done
    local timing=()
    _percolation "percolation-timing-l$timing_l" 1 gpu --lattice 2d --kind site --l "$timing_l" \
        --p 0.5927 --samples 5 && timing=("percolation-timing-l$timing_l")
    echo
    python3 - "$out" "${#pairs[@]}" "${pairs[@]}" "${timing[@]}" <<'PY' || status=1
import sys, h5py, numpy as np
out, npairs = sys.argv[1], int(sys.argv[2])
pairs, timing = sys.argv[3:3 + npairs], sys.argv[3 + npairs:]
same = ["clusters", "occupied_sites", "largest", "largest_label", "sum_squares", "percolates_any",
        "percolates_largest", "size_histogram", "labels"]
bad = 0
print(f"{'run':<44} {'gpus':>4} {'L':>6} {'rows':>7} {'R(p) axis 0':>20} {'ns/site':>9} {'figures':>7} {'labels':>6}  result")
for pair in pairs:
    ref_name, name = pair.split(":")
    with h5py.File(f"{out}/{ref_name}.h5") as rf, h5py.File(f"{out}/{name}.h5") as gf:
        r, g = rf["percolation"], gf["percolation"]
        figures = all(np.array_equal(r[k][:], g[k][:]) for k in same if k != "labels")
        labels = np.array_equal(r["labels"][:], g["labels"][:])
        ok = figures and labels
        bad += not ok
        R = " ".join(f"{x:.2f}" for x in g["summary/probability"][:, 0])
        ns = np.median(g["label_seconds"][:]) / int(g.attrs["sites"]) * 1e9
        print(f"{name:<44} {int(gf.attrs['ranks']):>4} {int(g.attrs['l']):>6} {len(g['sample']):>7} {R:>20} "
              f"{ns:>9.4f} {'same' if figures else 'DIFF':>7} {'same' if labels else 'DIFF':>6}  {'ok' if ok else 'FAIL'}")
for name in timing:
    with h5py.File(f"{out}/{name}.h5") as f:
        g = f["percolation"]
        secs = g["label_seconds"][:]
        ns = np.median(secs) / int(g.attrs["sites"]) * 1e9
        print(f"timing: 2D site percolation L = {int(g.attrs['l'])} p = 0.5927 on {f.attrs['device']}: "
              f"labelling {ns:.4f} ns/site (median of {len(secs)}; min {secs.min() / int(g.attrs['sites']) * 1e9:.4f}), "
              f"largest cluster fraction {g['summary/largest_fraction'][0]:.4f}")
sys.exit(1 if bad else 0)
PY
}
