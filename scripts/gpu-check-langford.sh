# shellcheck shell=bash
# Langford pairings for scripts/gpu-check (sourced there; it defines $bin, $out, counts, gpus
# and status). check_langford: Godfrey's sum on the GPU for n = 19 and 20 (or
# $GPU_CHECK_LANGFORD) on one GPU and on every GPU present, n = 23 (or
# $GPU_CHECK_LANGFORD_LARGE; empty skips it) on every GPU present, and Miller's search for
# n = 15 on one GPU and n = 16 on every GPU present, each count against the known value (the
# CPU path is checked against the same values in CI). Each case's row is printed as soon as
# it finishes. Sets status=1 on a wrong count or a failed run.
check_langford() {
    local -A known=([15]=39809640 [16]=326721800 [19]=256814891280 [20]=2636337861200
        [23]=3799455942515488 [24]=46845158056515936)
    local ns large n all=${counts[-1]}
    read -r -a ns <<<"${GPU_CHECK_LANGFORD:-19 20}"
    read -r -a large <<<"${GPU_CHECK_LANGFORD_LARGE-23}"
    printf '%3s %4s %-8s %-34s %22s %22s %17s %8s  %s\n' n gpus method device count known \
        "points/s per GPU" s result
    for n in "${ns[@]}"; do
        _langford "$n" 1 godfrey
        ((all > 1)) && _langford "$n" "$all" godfrey
    done
    for n in "${large[@]}"; do _langford "$n" "$all" godfrey; done
    _langford 15 1 miller
    _langford 16 "$all" miller
}

# _langford N NP METHOD: one run on NP GPUs and its row.
_langford() {
    local n=$1 np=$2 method=$3
    local name="langford-$method-n$n-np$np"
    run_tessera "$name" "$np" langford --n "$n" --method "$method" --device gpu || return 0
    python3 - "$out/$name.h5" "${known[$n]:-unknown}" <<'PY' || status=1
import sys, h5py
path, known = sys.argv[1], sys.argv[2]
text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
with h5py.File(path) as f:
    g = f["langford"]
    count, device, method = text(g.attrs["count"]), text(f.attrs["device"]), text(g.attrs["method"])
    rate = g["ranks/points_per_second"][:].mean()
    ok = int(g.attrs["complete"]) == 1 and count == known
    print(f"{int(g.attrs['n']):>3} {int(f.attrs['ranks']):>4} {method:<8} {device:<34} {count:>22} "
          f"{known:>22} {rate:>17.4g} {float(g.attrs['seconds']):>8.3f}  {'ok' if ok else 'FAIL'}",
          flush=True)
sys.exit(0 if ok else 1)
PY
}
