#!/usr/bin/env bash
# euler6, batch A: Euler circuits on 1, 2 and 4 GPUs (issue 32). Run from the repository root
# as `bash dev/euler6/run.sh` with OUT (an empty folder) and BASE (main's binary). About 100 s.
set -u
dev=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mine=$dev/tessera
base=${BASE:-dev/base7/tessera}
[[ $base == /* ]] || base=$PWD/$base
mkdir -p "${OUT:?OUT must name an empty folder}"
out=$(cd "$OUT" && pwd)
here=$PWD
# shellcheck source=/dev/null
source "$dev/scripts/lib.sh" # (cd's to $dev)
ensure_nccl_visible
cd "$here" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCL_NVLS_ENABLE=0
t0=$SECONDS
note() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$out/run.log"; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | tee -a "$out/run.log"
weak() { # NAME BIN RANKS [ENV...]: weak scaling at 2^24 per GPU, union of 2 cycles, random pairing
    local name=$1 bin=$2 ranks=$3
    shift 3
    env "$@" TESSERA_BIN="$bin" EULER_WEAK_LOG2=${EULER6_LOG2:-24} EULER_WEAK_GRAPHS=union EULER_WEAK_PAIRINGS=random \
        EULER_WEAK_RANKS="$ranks" EULER_WEAK_TIMEOUT=25 bash "$dev/scripts/weak-scaling-euler.sh" \
        "$out/weak-$name" 2>&1 | tee -a "$out/weak-$name.txt" "$out/run.log"
    note "weak scaling ($name) done"
}
weak new "$mine" "1 2 4"

# Correctness of the new paths on 4 and 2 GPUs against the CPU (the same checksum): the ends
# routed on the devices (union, NCCL and MPI), a trail's virtual edge and eulerize's edges
# appended, a directed trail; and a graph with odd vertices refused with the host's line.
bin=$mine
gpus=4
status=0
run_tessera() {
    local name=$1 np=$2
    shift 2
    rm -f "$out/check/$name.h5"
    if timeout 20 mpirun --bind-to none -np "$np" "$bin" "$@" --output "$out/check/$name.h5" \
        >"$out/check/$name.log" 2>&1; then
        return 0
    fi
    echo "FAILED: $name (log: $out/check/$name.log)" | tee -a "$out/run.log"
    tail -5 "$out/check/$name.log" | tee -a "$out/run.log"
    status=1
    return 1
}
mkdir -p "$out/check"
# shellcheck source=/dev/null
source "$dev/scripts/gpu-check-euler.sh"
(
    cd "$out/check" || exit 1
    printf '0 1\n1 2\n2 0\n2 3\n3 4\n4 2\n4 4\n1 3\n' >euler-trail.el
    printf '0 1\n1 2\n2 0\n0 3\n' >euler-arcs.el
    printf '0 1\n1 2\n' >euler-odd.el
)
euler_header | tee -a "$out/run.log"
check_case() { # NAME NP FLAGS...
    local name=$1 np=$2
    shift 2
    run_tessera "euler-$name-cpu" 1 euler --device cpu "$@" || return
    run_tessera "euler-$name-gpu-np$np" "$np" euler --device gpu "$@" &&
        (out=$out/check euler_rows "euler-$name-cpu:euler-$name-gpu-np$np" | tee -a "$out/run.log")
}
check_case union-random 4 --generator union-cycles --vertices 100000 --k 3 --pairing random
check_case trail 4 --input "$out/check/euler-trail.el" --trail
check_case kronecker-eulerized 4 --scale 12 --eulerize
check_case directed-trail 2 --input "$out/check/euler-arcs.el" --directed --trail
check_case union-random-mpi 2 --generator union-cycles --vertices 100000 --k 3 --pairing random --gpu-transport mpi
(out=$out/check euler_refused odd 2 "not Eulerian: 2 of 3 vertices have odd degree" | tee -a "$out/run.log")
note "circuits compared"

# main's binary at this session's start, the same runs.
weak base "$base" "2 4"
# The rulers' density: one head in 32 (main's), and in 4, against the default 8.
weak rulers32 "$mine" "2 4" TESSERA_EULER_RULERS=32
weak rulers4 "$mine" "4" TESSERA_EULER_RULERS=4
note "all done"
