# shellcheck shell=bash
# BFS for scripts/gpu-check (sourced in its BFS section; it defines $bin, $out, $counts, $gpus,
# $roots, run_tessera and status). check_bfs: for SCALE $GPU_CHECK_SCALES (20), one CPU run
# as the reference, then GPU runs, all validated (Graph500 rules) and with depth arrays
# written: 1D on one GPU and on every GPU present (NCCL, and there also staged through MPI;
# on 2 ranks too where the host has more than 2 GPUs), 2D on 1x1 and on the most square grid
# of every GPU present (2x1 on 2, 2x2 on 4; on a host of one GPU, 1x2 ranks sharing it
# through MPI). Roots, nedge per root and every depth array must equal the CPU run's, and so
# must the CSR (its checksum: the GPU runs build it on the GPU, the reference on the CPU).
# Each run prints its row as soon as it finishes (a cut run still shows what it checked);
# about 10 tessera starts. Sets status=1 on any difference.

# bfs_compare REF NAME: one row comparing run NAME with the CPU reference REF.
bfs_compare() {
    python3 - "$out" "$1" "$2" <<'PY' || status=1
import sys, h5py, numpy as np
out, ref_name, name = sys.argv[1:]
try:
    ref, run = h5py.File(f"{out}/{ref_name}.h5"), h5py.File(f"{out}/{name}.h5")
except OSError as e:
    print(f"{name}: missing result ({e})"); sys.exit(1)
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
rb, gb = ref["bfs"], run["bfs"]
same_roots = np.array_equal(rb["roots"][:], gb["roots"][:])
same_nedge = same_roots and np.array_equal(rb["nedge"][:], gb["nedge"][:])
same_depth = same_roots and np.array_equal(rb["depth"][:], gb["depth"][:])
same_csr = rb.attrs["csr_checksum"] == gb.attrs["csr_checksum"]
ok = same_csr and same_nedge and same_depth and gb.attrs["validated"] == 1
part = text(gb.attrs["partition"])
grid = f"{int(gb.attrs['grid_rows'])}x{int(gb.attrs['grid_cols'])}" if part == "2d" else "1d"
same = lambda b: "same" if b else "DIFF"
print(f"{int(gb.attrs['SCALE']):>5} {int(run.attrs['ranks']):>5} {grid:>4} {text(gb.attrs['transport']):<4} "
      f"{text(run.attrs['device']):<34} {text(gb.attrs['construction_device']):<5} "
      f"{gb.attrs['bfs  harmonic_mean_TEPS']:>11.4g} {gb.attrs['harmonic_mean_TEPS_with_copy_to_host']:>11.4g} "
      f"{rb.attrs['bfs  harmonic_mean_TEPS']:>11.4g} {same(same_csr):>4} {same(same_nedge):>6} {same(same_depth):>6}  "
      f"{'ok' if ok else 'FAIL'}", flush=True)
sys.exit(0 if ok else 1)
PY
}

# bfs_case NAME NP SCALE TRANSPORT [FLAGS...]: a GPU run, then its row against cpu-sSCALE.
bfs_case() {
    local name=$1 np=$2 scale=$3 transport=$4
    run_tessera "$name" "$np" bfs --scale "$scale" --roots "$roots" --device gpu \
        --gpu-transport "$transport" --write-depths true "${@:5}" || return 0
    bfs_compare "cpu-s$scale" "$name"
}

check_bfs() {
    local scale np grid transport
    local -a scales one_d=(1) grids=(1,1)
    read -r -a scales <<<"${GPU_CHECK_SCALES:-20}"
    ((gpus > 2)) && one_d+=(2)
    ((gpus > 1)) && one_d+=("$gpus")
    case $gpus in
        1) grids+=(1,2) ;;
        2 | 3) grids+=(2,1) ;;
        *) grids+=(2,$((gpus / 2))) ;;
    esac
    printf '%5s %5s %4s %-4s %-34s %-5s %11s %11s %11s %4s %6s %6s  %s\n' scale ranks grid via \
        device built "hmean TEPS" "with copy" "cpu TEPS" csr nedge depths result
    for scale in "${scales[@]}"; do
        run_tessera "cpu-s$scale" 1 bfs --scale "$scale" --roots "$roots" --device cpu \
            --write-depths true || continue
        for np in "${one_d[@]}"; do
            bfs_case "gpu-s$scale-np$np-nccl" "$np" "$scale" nccl
        done
        ((gpus > 1)) && bfs_case "gpu-s$scale-np$gpus-mpi" "$gpus" "$scale" mpi
        for grid in "${grids[@]}"; do
            np=$((${grid%,*} * ${grid#*,}))
            # Ranks sharing one GPU exchange through MPI (NCCL wants a GPU per rank).
            transport=nccl
            ((np > gpus)) && transport=mpi
            bfs_case "gpu2d-s$scale-${grid/,/x}-$transport" "$np" "$scale" "$transport" \
                --partition 2d --grid "$grid"
        done
    done
}
