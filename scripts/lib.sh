#!/usr/bin/env bash
# shellcheck shell=bash
# Shared set-up for scripts/*; sourced, not run:
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Sourcing it cd's to the repository root and exports the environment every run needs.
# Functions:
#     ensure_packages   check the Debian packages and the Rust toolchain; install the
#                       packages when root (apt-get), else print the command and exit 1
#     ensure_rust_components NAME...   rustup components (rustfmt, clippy), added if missing
#     ensure_h5py       a python3 that can `import h5py`; sets PYTHON
#     ensure_matplotlib the same, able to `import matplotlib` too (scripts/plot); sets PYTHON
#     ensure_binary     the release binary: built with cargo where there is one, else the
#                       prebuilt one (GPU hosts have no Rust toolchain); sets TESSERA_BIN
#     ensure_nccl_visible   where NCCL is installed only as libnccl.so.2 (the pip wheel, a
#                       runtime-only package), make it loadable under the name tessera
#                       opens, libnccl.so, through a link in out/nccl-lib on LD_LIBRARY_PATH
#     bench_runs WORKLOAD SHOW [DECK...]   the runs of scripts/bench-WORKLOAD (see there)
# Arrays:
#     MPIRUN            the mpirun command line: "${MPIRUN[@]}" -np 2 target/release/tessera ...

# The directory the script was started from (deck arguments are relative to it).
CALLER_PWD=$PWD
TESSERA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$TESSERA_ROOT" || exit 1

# House rule for the GPU hosts: NVLink SHARP (NVLS) off in every environment we start.
export NCCL_NVLS_ENABLE=0
# Open MPI refuses to start as root unless both of these are set.
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Allow more ranks than cores for every mpirun started from here, including the ones the
# integration tests start themselves (np up to 4 on a 2-core CI machine).
export OMPI_MCA_rmaps_base_oversubscribe=1
# rustup installs into ~/.cargo/bin, which non-login shells (CI) may not have on PATH.
if [[ -n ${HOME:-} && -d $HOME/.cargo/bin && :$PATH: != *":$HOME/.cargo/bin:"* ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

# shellcheck disable=SC2034  # used by the scripts that source this file
MPIRUN=(mpirun --oversubscribe)

# The Debian/Ubuntu packages tessera needs to build, run and be checked.
TESSERA_APT_PACKAGES=(libopenmpi-dev openmpi-bin libhdf5-dev libclang-dev pkg-config hdf5-tools time)

log() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}
is_root() { [[ $(id -u) -eq 0 ]]; }

# Prints the package that provides each missing piece, one per line.
_missing_packages() {
    command -v mpirun >/dev/null 2>&1 || echo openmpi-bin
    command -v mpicc >/dev/null 2>&1 || echo libopenmpi-dev
    command -v h5dump >/dev/null 2>&1 || echo hdf5-tools
    command -v pkg-config >/dev/null 2>&1 || echo pkg-config
    pkg-config --exists hdf5 >/dev/null 2>&1 || echo libhdf5-dev
    # bindgen (for the mpi crate) needs libclang.so and clang's own headers (stddef.h).
    if ! compgen -G '/usr/lib/llvm-*/lib/libclang*.so' >/dev/null ||
        ! compgen -G '/usr/lib/llvm-*/lib/clang/*/include/stddef.h' >/dev/null; then
        echo libclang-dev
    fi
    [[ -x /usr/bin/time ]] || echo time
    # The Rust linker and the mpi crate's C shim need a C compiler as `cc`.
    command -v cc >/dev/null 2>&1 || echo gcc
    # scripts/emulate-kernels compiles the CUDA kernels' text as C++.
    command -v g++ >/dev/null 2>&1 || echo g++
}

# Install (when root) or name (otherwise) the packages in "$@"; exit 1 if they stay missing.
_apt_install() {
    if ! is_root; then
        printf 'Missing packages. Install them with:\n\n    sudo apt-get install -y %s\n\n' "$*" >&2
        exit 1
    fi
    command -v apt-get >/dev/null 2>&1 ||
        die "missing packages ($*) and no apt-get here: install their equivalents by hand"
    log "installing: $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q "$@"
}

ensure_packages() {
    local missing
    mapfile -t missing < <(_missing_packages | sort -u)
    if ((${#missing[@]})); then
        log "missing: ${missing[*]}"
        # Install the whole list (apt skips what is there) plus anything outside it.
        local want
        mapfile -t want < <(printf '%s\n' "${TESSERA_APT_PACKAGES[@]}" "${missing[@]}" | awk '!seen[$0]++')
        _apt_install "${want[@]}"
        mapfile -t missing < <(_missing_packages | sort -u)
        ((${#missing[@]} == 0)) || die "still missing after apt-get install: ${missing[*]}"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        cat >&2 <<'MSG'
error: cargo (the Rust toolchain) was not found. Install it with rustup:

    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y
    . "$HOME/.cargo/env"

then run this script again.
MSG
        exit 1
    fi
}

ensure_binary() {
    TESSERA_BIN=${TESSERA_BIN:-target/release/tessera}
    if command -v cargo >/dev/null 2>&1; then
        ensure_packages
        log "building: cargo build --release"
        cargo build --release
    elif [[ -x $TESSERA_BIN ]]; then
        log "no cargo here: using the prebuilt $TESSERA_BIN"
    else
        die "no cargo to build with and no prebuilt binary at $TESSERA_BIN"
    fi
}

# Add rustup components (rustfmt, clippy) that `cargo fmt` / `cargo clippy` need.
ensure_rust_components() {
    local c missing=()
    for c in "$@"; do
        case $c in
        rustfmt) cargo fmt --version >/dev/null 2>&1 || missing+=("$c") ;;
        clippy) cargo clippy --version >/dev/null 2>&1 || missing+=("$c") ;;
        *) die "ensure_rust_components: unknown component $c" ;;
        esac
    done
    ((${#missing[@]})) || return 0
    command -v rustup >/dev/null 2>&1 ||
        die "cargo has no ${missing[*]}, and there is no rustup to add them: install them with your toolchain"
    log "adding rustup components: ${missing[*]}"
    rustup component add "${missing[@]}"
}

# Find a python3 that can `import h5py` and set PYTHON to it. Tries, in order: python3 as
# it is; pip install h5py; Debian's python3-h5py (system python, when root).
ensure_h5py() {
    PYTHON=python3
    if ! command -v python3 >/dev/null 2>&1; then
        _apt_install python3
    fi
    if "$PYTHON" -c 'import h5py' >/dev/null 2>&1; then
        return 0
    fi
    log "python3 has no h5py: trying pip"
    # On Debian's own python3, pip refuses (PEP 668, externally managed); the apt step follows.
    if "$PYTHON" -m pip install --quiet h5py && "$PYTHON" -c 'import h5py' >/dev/null 2>&1; then
        return 0
    fi
    if is_root && command -v apt-get >/dev/null 2>&1; then
        _apt_install python3-h5py
        for PYTHON in python3 /usr/bin/python3; do
            "$PYTHON" -c 'import h5py' >/dev/null 2>&1 && return 0
        done
    fi
    die "cannot import h5py: install it (python3 -m pip install h5py, or sudo apt-get install -y python3-h5py)"
}

# ensure_h5py, then make sure that PYTHON can also `import matplotlib` (scripts/plot). Tries
# pip install matplotlib into that python; then Debian's python3-matplotlib (with
# python3-h5py, system python, when root).
ensure_matplotlib() {
    ensure_h5py
    local check='import h5py, numpy, matplotlib'
    "$PYTHON" -c "$check" >/dev/null 2>&1 && return 0
    log "$PYTHON has no matplotlib: trying pip"
    if "$PYTHON" -m pip install --quiet matplotlib && "$PYTHON" -c "$check" >/dev/null 2>&1; then
        return 0
    fi
    if is_root && command -v apt-get >/dev/null 2>&1; then
        _apt_install python3-h5py python3-matplotlib
        for PYTHON in python3 /usr/bin/python3; do
            "$PYTHON" -c "$check" >/dev/null 2>&1 && return 0
        done
    fi
    die "cannot import matplotlib: install it (python3 -m pip install matplotlib, or sudo apt-get install -y python3-matplotlib)"
}

# tessera opens NCCL at run time as libnccl.so (cudarc's names; no libnccl.so.2 among them).
ensure_nccl_visible() {
    local dir lib=""
    for dir in ${LD_LIBRARY_PATH:-}; do
        [[ -e $dir/libnccl.so ]] && return 0
    done
    ldconfig -p 2>/dev/null | grep -q 'libnccl\.so ' && return 0
    lib=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')
    if [[ -z $lib ]] && command -v python3 >/dev/null 2>&1; then
        lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
    fi
    [[ -n $lib && -e $lib ]] || return 0 # no NCCL here: gpu_transport = "auto" falls back to MPI
    mkdir -p out/nccl-lib
    ln -sf "$lib" out/nccl-lib/libnccl.so
    export LD_LIBRARY_PATH="$TESSERA_ROOT/out/nccl-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log "NCCL: $lib, linked as out/nccl-lib/libnccl.so"
}

# gpus_present: how many GPUs nvidia-smi lists (0 where there is none).
gpus_present() {
    nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
}

# scaling_ranks [COUNTS]: the rank counts of a scaling run, one rank per GPU: COUNTS where
# given (non-empty), else 1, 2, 4, ... up to the GPUs present (1 on a host without one).
scaling_ranks() {
    if [[ -n ${1:-} ]]; then
        echo "$1"
        return
    fi
    local gpus ranks="1" r=2
    gpus=$(gpus_present)
    for ((; r <= gpus; r *= 2)); do ranks+=" $r"; done
    echo "$ranks"
}

# log2_ceil N: the least k with 2^k >= N (the SCALE a weak-scaling run adds for N ranks).
log2_ceil() {
    local k=0
    while (((1 << k) < $1)); do k=$((k + 1)); done
    echo "$k"
}

# bench_runs WORKLOAD SHOW [DECK...]: the runs behind scripts/bench-WORKLOAD. Each deck (those
# given, relative to the caller's directory, else inputs/bench/WORKLOAD-cpu-*.toml), at each
# rank count in $BENCH_NP (default "1"), $BENCH_REPEAT times (default 3), under mpirun with
# $BENCH_MPIRUN_FLAGS (default "--bind-to none"): `tessera run DECK --output` a file under
# out/bench/runs, stdout and stderr under out/bench/logs. After each run `SHOW LOG` prints
# the run's result to stderr (one line). Builds the binary and finds h5py first. Sets
# BENCH_DIR (out/bench) and BENCH_MANIFEST (a TSV of deck, np, repeat, h5 per run, for the
# script's report).
bench_runs() {
    local workload=$1 show=$2
    shift 2
    local nps mpi_flags repeat deck name np r stem h5 d
    read -r -a nps <<<"${BENCH_NP:-1}"
    read -r -a mpi_flags <<<"${BENCH_MPIRUN_FLAGS---bind-to none}"
    repeat=${BENCH_REPEAT:-3}
    [[ $repeat =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, not '$repeat'"

    local decks=()
    if (($#)); then
        for d in "$@"; do
            if [[ $d != /* && -f $CALLER_PWD/$d ]]; then d=$CALLER_PWD/$d; fi
            [[ -f $d ]] || die "no such deck: $d"
            decks+=("$d")
        done
    else
        shopt -s nullglob
        decks=(inputs/bench/"$workload"-cpu-*.toml)
        shopt -u nullglob
        ((${#decks[@]})) || die "no decks in inputs/bench/$workload-cpu-*.toml"
    fi

    ensure_binary
    ensure_h5py
    BENCH_DIR=out/bench
    BENCH_MANIFEST=$BENCH_DIR/logs/$workload-manifest.tsv
    mkdir -p "$BENCH_DIR/logs" "$BENCH_DIR/runs"
    printf 'deck\tnp\trepeat\th5\n' >"$BENCH_MANIFEST"
    for deck in "${decks[@]}"; do
        name=$(basename "$deck" .toml)
        for np in "${nps[@]}"; do
            for ((r = 1; r <= repeat; r++)); do
                stem="$name-np$np-r$r"
                h5=$BENCH_DIR/runs/$stem.h5
                rm -f "$h5" # a rerun replaces its own result (tessera refuses to overwrite)
                printf '%s ... ' "$stem" >&2
                if ! "${MPIRUN[@]}" "${mpi_flags[@]}" -np "$np" "$TESSERA_BIN" run "$deck" \
                    --output "$h5" >"$BENCH_DIR/logs/$stem.log" 2>"$BENCH_DIR/logs/$stem.err"; then
                    echo FAILED >&2
                    tail -n 20 "$BENCH_DIR/logs/$stem.err" >&2
                    die "run failed: $deck on $np ranks (logs: $BENCH_DIR/logs/$stem.*)"
                fi
                "$show" "$BENCH_DIR/logs/$stem.log"
                printf '%s\t%s\t%s\t%s\n' "$deck" "$np" "$r" "$h5" >>"$BENCH_MANIFEST"
            done
        done
    done
}
