# shellcheck shell=bash
# Percolation for scripts/gpu-check (sourced there; it defines $bin, $out, counts, shared and
# status). check_percolation: `tessera percolation` on the CPU (one rank, the reference), on
# one GPU and on all GPUs present (or the `shared` rank counts on one GPU), for six cases
# that cover 2D and 3D, periodic and open, site and bond (2D site periodic, 2D bond open, 3D
# site open, 3D bond periodic; and a strip 5L x L, 2D site periodic, and a bar 5L x L x L, 3D
# bond open) at a small L ($GPU_CHECK_PERCOLATION_L2 = 96 in 2D,
# $GPU_CHECK_PERCOLATION_L3 = 24 in 3D: partial tiles), three p around the threshold and 8
# samples each, labels written: every per-sample figure and every label must equal the CPU
# run's. Each case's rows print as soon as its runs end. Then one timing row: 2D site
# percolation at p = 0.5927 on one GPU at L = $GPU_CHECK_PERCOLATION_TIMING_L (32768), 5
# samples; "ns/site" is the median labelling time per site (local labelling, boundary graph,
# relabelling; draw and statistics excluded). Sets status=1 on any difference or failed run.

# percolation_compare HEADER PAIRS...: one row per CPU:GPU pair (the header first when
# HEADER is 1); returns 1 on any difference.
percolation_compare() {
    python3 - "$out" "$@" <<'PY'
import sys, h5py, numpy as np
out, header, pairs = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
same = ["clusters", "occupied_sites", "largest", "largest_label", "sum_squares", "percolates_any",
        "percolates_largest", "size_histogram", "labels"]
bad = 0
if header:
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
              f"{ns:>9.4f} {'same' if figures else 'DIFF':>7} {'same' if labels else 'DIFF':>6}  {'ok' if ok else 'FAIL'}",
              flush=True)
sys.exit(1 if bad else 0)
PY
}

# percolation_timing NAME: the timing row.
percolation_timing() {
    python3 - "$out/$1.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    g = f["percolation"]
    secs, sites = g["label_seconds"][:], int(g.attrs["sites"])
    ns = np.median(secs) / sites * 1e9
    floor = float(g.attrs.get("label_floor_ns_per_site", float("nan")))
    print(f"timing: 2D site percolation L = {int(g.attrs['l'])} p = 0.5927 on {f.attrs['device']}: "
          f"labelling {ns:.4f} ns/site (median of {len(secs)}; min {secs.min() / sites * 1e9:.4f}; "
          f"{ns / floor:.1f}x the memory floor {floor:.4f}), "
          f"largest cluster fraction {g['summary/largest_fraction'][0]:.4f}")
PY
}

check_percolation() {
    local l2=${GPU_CHECK_PERCOLATION_L2:-96} l3=${GPU_CHECK_PERCOLATION_L3:-24}
    local timing_l=${GPU_CHECK_PERCOLATION_TIMING_L:-32768}
    local case lattice kind boundary shape l p name np header=1 ranks=(1)
    ((${#counts[@]} > 1)) && ranks+=("${counts[-1]}")
    _percolation() { # NAME NP DEVICE ARGS...
        local name=$1 np=$2 device=$3
        shift 3
        run_tessera "$name" "$np" percolation --device "$device" "$@"
    }
    echo
    for case in 2d-site-periodic 2d-bond-open 3d-site-open 3d-bond-periodic 2d-site-periodic-strip \
        3d-bond-open-strip; do
        IFS=- read -r lattice kind boundary shape <<<"$case"
        case $lattice-$kind in
        2d-site) p=0.55,0.5927,0.65 l=$l2 ;;
        2d-bond) p=0.45,0.5,0.55 l=$l2 ;;
        3d-site) p=0.28,0.3116,0.34 l=$l3 ;;
        3d-bond) p=0.22,0.2488,0.28 l=$l3 ;;
        esac
        name="percolation-$case"
        local args=(--lattice "$lattice" --kind "$kind" --boundary "$boundary" --l "$l"
            --p "$p" --samples 8 --write-labels)
        # A strip (2D) or bar (3D): axis 0, the slabs' axis, five times the others.
        [[ $shape == strip ]] && args+=(--length $((5 * l)))
        _percolation "$name-cpu" 1 cpu "${args[@]}" || continue
        local pairs=()
        for np in "${ranks[@]}" "${shared[@]}"; do
            _percolation "$name-gpu-np$np" "$np" gpu "${args[@]}" && pairs+=("$name-cpu:$name-gpu-np$np")
        done
        ((${#pairs[@]})) || continue
        percolation_compare "$header" "${pairs[@]}" || status=1
        header=0
    done
    _percolation "percolation-timing-l$timing_l" 1 gpu --lattice 2d --kind site --l "$timing_l" \
        --p 0.5927 --samples 5 && { percolation_timing "percolation-timing-l$timing_l" || status=1; }
}
