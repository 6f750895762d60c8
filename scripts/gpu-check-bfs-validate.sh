# shellcheck shell=bash
# BFS validation on the devices for scripts/gpu-check (sourced in its BFS section; it defines
# $bin, $out, $gpus and status). check_bfs_validate: on one GPU and on every GPU present (one
# rank per GPU), a Kronecker graph of SCALE $GPU_CHECK_VALIDATE_SCALE (18):
# - valid searches: the device validator (`--validator device`, the default) accepts the 1D
#   and the 2D search, and the host one the 1D search, with the same nedge and depth arrays;
# - a parent array broken on purpose (TESSERA_BFS_CORRUPT, src/workloads/bfs/corrupt.rs:
#   $GPU_CHECK_VALIDATE_KINDS, by default cycle, depth, edge, unreached, half of them in 1D
#   and half in 2D on each rank count, the halves swapped between the counts): the device
#   validator must reject it with one clear validation line for the first root, the same
#   rule and vertex its CPU twin finds (a disagreement is an error of its own, "the device
#   validator found ..."), and the host validator must reject the same root (1D, the first
#   kind of cycle and unreached on each count).
# Each case prints its row as it finishes (about 8 tessera starts a rank count); sets
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

# validate_pair DEVICE HOST: one row, the device-validated run against the host-validated one.
validate_pair() {
    python3 - "$out" "$1" "$2" <<'PY' || status=1
import sys, h5py, numpy as np
out, dev_name, host_name = sys.argv[1:]
try:
    d, h = h5py.File(f"{out}/{dev_name}.h5")["bfs"], h5py.File(f"{out}/{host_name}.h5")["bfs"]
except OSError as e:
    print(f"{dev_name}: missing result ({e})"); sys.exit(1)
same_nedge = np.array_equal(d["nedge"][:], h["nedge"][:])
same_depth = np.array_equal(d["depth"][:], h["depth"][:])
ok = same_nedge and same_depth and d.attrs["validated"] == 1 and h.attrs["validated"] == 1
same = lambda b: "same" if b else "DIFF"
print(f"{dev_name:<34} {np.mean(d['validate_time'][:]):>22.4g} {np.mean(h['validate_time'][:]):>10.4g} "
      f"{same(same_nedge):>6} {same(same_depth):>6}  {'ok' if ok else 'FAIL'}", flush=True)
sys.exit(0 if ok else 1)
PY
}

# corrupt_case NP PART KIND HOST: the device validator rejects a broken parent array (and, with
# HOST = 1, the host validator the same root).
corrupt_case() {
    local np=$1 part=$2 kind=$3 host=$4 name="corrupt-$3-np$1-$2" got
    expect_rejected "$name" "$np" "$kind" --scale "$scale" --roots 2 --partition "$part"
    got=$rejected
    printf '%-5s %-4s %-10s %-10s %s\n' "$np" "$part" "$kind" device "$got"
    ((host)) || return 0
    expect_rejected "$name-host" "$np" "$kind" --scale "$scale" --roots 2 --validator host
    printf '%-5s %-4s %-10s %-10s %s\n' "$np" "$part" "$kind" host "$rejected"
    if [[ ${got%% *} != "${rejected%% *}" ]]; then
        echo "FAIL: the validators rejected different roots"
        status=1
    fi
}

check_bfs_validate() {
    local scale=${GPU_CHECK_VALIDATE_SCALE:-18} np part validator name i half
    local -a kinds nps=(1)
    read -r -a kinds <<<"${GPU_CHECK_VALIDATE_KINDS:-cycle depth edge unreached}"
    ((gpus > 1)) && nps+=("$gpus")
    half=$(((${#kinds[@]} + 1) / 2))
    printf '%-34s %22s %10s %6s %6s  %s\n' run "validate s/root device" host nedge depths result
    for np in "${nps[@]}"; do
        for part in 1d 2d; do
            for validator in device host; do
                [[ $part == 2d && $validator == host ]] && continue
                name="validate-s$scale-np$np-$part-$validator"
                run_tessera "$name" "$np" bfs --scale "$scale" --roots 8 --write-depths true \
                    --validator "$validator" --partition "$part" || true
            done
            validate_pair "validate-s$scale-np$np-$part-device" "validate-s$scale-np$np-1d-host"
        done
    done
    printf '%-5s %-4s %-10s %-10s %s\n' ranks part corruption validator "rejected: root, rule @vertex"
    for np in "${nps[@]}"; do
        local hosted=0
        for i in "${!kinds[@]}"; do
            # The first half in 1D on one GPU and in 2D on all, the second half the other way.
            part=1d
            (((i < half) != (np == 1))) && part=2d
            local host=0
            if [[ $part == 1d && $hosted == 0 && (${kinds[$i]} == cycle || ${kinds[$i]} == unreached) ]]; then
                host=1
                hosted=1
            fi
            corrupt_case "$np" "$part" "${kinds[$i]}" "$host"
        done
    done
}
