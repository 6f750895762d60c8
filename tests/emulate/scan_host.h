// src/device/scan.rs driven on the host: the prelude's scan kernels (SCAN_KERNELS, declared
// for u64, and for u32 where the file using this declares them too) launched as the GPU runs
// them, a warp at a time (warp_fibers.h). Used by ghosts_split.cpp and bc_levels.cpp.
#pragma once
#include <algorithm>
#include <vector>

// Threads of a launch of one per item, in blocks of 256 (src/device/kernel.rs `grid`).
static u64 grid(u64 items) { return std::max<u64>(1, (items + 255) / 256) * 256; }

// src/device/scan.rs `exclusive_scan` (the prelude's scan): the first `len` items of `a`, in
// place, in tiles of `rounds` warps' widths.
template <typename T>
static void exclusive_scan(T *a, u64 len, u32 rounds) {
    u64 tile_len = (u64)rounds * WARP, tiles = (len + tile_len - 1) / tile_len;
    std::vector<T> sums(std::max<u64>(tiles, 1), (T)~0ull);
    launch_warps(grid(tiles * WARP), [&] {
        if constexpr (sizeof(T) == 8) scan_tiles_u64(a, len, rounds, sums.data());
        else scan_tiles_u32(a, len, rounds, sums.data());
    });
    if (tiles > 1) {
        exclusive_scan(sums.data(), tiles, rounds);
        launch_warps(grid(len), [&] {
            if constexpr (sizeof(T) == 8) scan_add_u64(a, len, tile_len, sums.data());
            else scan_add_u32(a, len, tile_len, sums.data());
        });
    }
}

