# shellcheck shell=bash
# BFS validation on the devices for scripts/gpu-check (sourced in its BFS section; it defines
# $bin, $out, $counts, $gpus and status). check_bfs_validate: on one GPU and on every GPU
# present (one rank per GPU), 1D and 2D, a Kronecker graph of SCALE $GPU_CHECK_VALIDATE_SCALE
# (18), the partitions $GPU_CHECK_VALIDATE_PARTS ("1d 2d"):
# - valid searches: the device validator (`--validator device`, the default) and the host
#   one both accept them, with the same nedge and depth arrays;
# - a parent array broken on purpose (TESSERA_BFS_CORRUPT, src/workloads/bfs/corrupt.rs:
#   $GPU_CHECK_VALIDATE_KINDS, by default cycle, depth, edge, unreached): the device validator must reject it with one clear
#   validation line for the first root, the same rule and vertex its CPU twin finds (a
#   disagreement is an error of its own, "the device validator found ..."), and the host
#   validator must reject the same root (1D, cycle and unreached).
# Prints a table (validate seconds per root: the device's and the host's mean); sets
# status=1 on any difference.

# expect_rejected NAME NP KIND ARGS...: a bfs run with TESSERA_BFS_CORRUPT=KIND that must fail
# validation; sets rejected to "root rule @vertex" of its error line, or to ACCEPTED or FAIL
# (and status=1).
expect_rejected() {
    local name=$1 np=$2 kind=$3
    shift 3
    rm -f "$out/$name.h5"
    if TESSERA_BFS_CORRUPT=$kind mpirun --oversubscribe --bind-to none -np "$np" \
        -x TESSERA_BFS_CORRUPT "$bin" bfs "$@" --output "$out/$name.h5" >"$out/$name.log" 2>&1; then
        rejected=ACCEPTED
        status=1
        return
    fi
    local line
    line=$(grep -o "validation failed for root [0-9]*: rule '[^']*' broken at vertex [0-9]*" \
        "$out/$name.log" | head -1)
    if [[ -z $line ]] || grep -q "the same check on the host found" "$out/$name.log"; then
        rejected="FAIL (log: $out/$name.log)"
        status=1
        return
    fi
    rejected=$(echo "$line" | sed -E "s/validation failed for root ([0-9]*): rule '([^']*)' broken at vertex ([0-9]*)/\1 \2 @\3/")
}

check_bfs_validate() {
    local scale=${GPU_CHECK_VALIDATE_SCALE:-18} np part name kind got rejected
    local -a kinds parts
    read -r -a kinds <<<"${GPU_CHECK_VALIDATE_KINDS:-cycle depth edge unreached}"
    read -r -a parts <<<"${GPU_CHECK_VALIDATE_PARTS:-1d 2d}"
    local pairs=()
    printf '%-5s %-4s %-10s %-10s %s\n' ranks part corruption validator "rejected: root, rule @vertex"
    for np in "${counts[@]}"; do
        for part in "${parts[@]}"; do
            for validator in device host; do
                name="validate-s$scale-np$np-$part-$validator"
                run_tessera "$name" "$np" bfs --scale "$scale" --roots 8 --write-depths true \
                    --validator "$validator" --partition "$part" || true
            done
            pairs+=("validate-s$scale-np$np-$part-device:validate-s$scale-np$np-$part-host")
            for kind in "${kinds[@]}"; do
                name="corrupt-$kind-np$np-$part"
                expect_rejected "$name" "$np" "$kind" --scale "$scale" --roots 2 --partition "$part"
                got=$rejected
                printf '%-5s %-4s %-10s %-10s %s\n' "$np" "$part" "$kind" device "$got"
                if [[ $part == 1d && ($kind == cycle || $kind == unreached) ]]; then
                    expect_rejected "$name-host" "$np" "$kind" --scale "$scale" --roots 2 \
                        --validator host
                    printf '%-5s %-4s %-10s %-10s %s\n' "$np" "$part" "$kind" host "$rejected"
                    if [[ ${got%% *} != "${rejected%% *}" ]]; then
                        echo "FAIL: the validators rejected different roots"
                        status=1
                    fi
                fi
            done
        done
    done
    python3 - "$out" "${pairs[@]}" <<'PY' || status=1
import sys, h5py, numpy as np
out, pairs = sys.argv[1], sys.argv[2:]
bad = 0
print(f"{'run':<34} {'validate s/root device':>22} {'host':>10} {'nedge':>6} {'depths':>6}  result")
for pair in pairs:
    dev_name, host_name = pair.split(":")
    try:
        d, h = h5py.File(f"{out}/{dev_name}.h5")["bfs"], h5py.File(f"{out}/{host_name}.h5")["bfs"]
    except OSError as e:
        print(f"{dev_name}: missing result ({e})"); bad += 1; continue
    same_nedge = np.array_equal(d["nedge"][:], h["nedge"][:])
    same_depth = np.array_equal(d["depth"][:], h["depth"][:])
    ok = same_nedge and same_depth and d.attrs["validated"] == 1 and h.attrs["validated"] == 1
    bad += not ok
    print(f"{dev_name:<34} {np.mean(d['validate_time'][:]):>22.4g} {np.mean(h['validate_time'][:]):>10.4g} "
          f"{'same' if same_nedge else 'DIFF':>6} {'same' if same_depth else 'DIFF':>6}  {'ok' if ok else 'FAIL'}")
sys.exit(1 if bad else 0)
PY
}
