// Host emulation of kernels/cortex.cu's phase 2: phase2_tiled (a block per tile, its window
// of state bytes in shared memory) against phase2 (a thread per neuron) on random slabs:
// partial tiles, windows wider than the lattice, the inner core's rows and the border's, both
// synapse schemes. Each CUDA thread of a block is a host thread; __syncthreads a barrier.
// Run by scripts/emulate-kernels (needs g++ with C++20).
#include <cstdint>
#include <cstdio>
#include <vector>
#include <thread>
#include <barrier>
#include <random>
#include <algorithm>
typedef unsigned long long u64; typedef long long i64; typedef unsigned int u32; typedef unsigned short u16; typedef unsigned char u8;
#define __device__
#define __forceinline__ inline
#define __global__
#define WARP 32
#define INHIBITORY 2
#define EXP_SLOTS 16
#define TABLE_SLOTS 75
struct Step { u64 step, noise_key, boost_key; double base_i[2], noise[2], boost_fraction, amplitude[2], decay[2]; u32 scheme, clamp, table, w; };
struct D3 { u32 x, y, z; };
thread_local D3 threadIdx, blockIdx; D3 blockDim, gridDim;
static std::barrier<> *bar;
inline void __syncthreads() { bar->arrive_and_wait(); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline u64 thread_index() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
inline u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }
using std::min;
static u8 shared_mem[48 * 1024];
#include "cortex_phase2.h"  // written by scripts/emulate-kernels
int main() {
    int bad = 0;
    std::mt19937_64 g(7);
    for (auto [l, rows, r, k, row0, row1, table] : std::vector<std::tuple<u64,u64,u64,u32,u64,u64,u32>>{
             {48, 40, 8, 20, 0, 40, 0}, {48, 40, 8, 20, 8, 32, 1}, {16, 10, 4, 30, 0, 4, 0}, {16, 10, 4, 30, 6, 10, 1},
             {70, 33, 5, 25, 0, 33, 0}, {100, 64, 20, 40, 20, 44, 0}, {40, 9, 9, 12, 0, 9, 1}}) {
        u64 n = l * rows;
        std::vector<u8> state(n), below(r * l), above(r * l), delay(n);
        for (auto *v : {&state, &below, &above}) for (auto &b : *v) b = g() & 3;
        for (auto &d : delay) d = g() % 16;
        std::vector<u16> offsets((u64)k * n);
        for (auto &o : offsets) {
            int dx = (int)(g() % (2 * r + 1)) - (int)r, dy = (int)(g() % (2 * r + 1)) - (int)r;
            o = (u16)((u8)(signed char)dx) | ((u16)((u8)(signed char)dy) << 8);
        }
        std::vector<float> washout(2 * 30);
        for (auto &w : washout) w = (float)(g() % 1000) / 997.0f;
        Step s{}; s.step = 5; s.table = table; s.w = 30;
        std::vector<u32> ring_a(EXP_SLOTS * n, 7), ring_b = ring_a;
        std::vector<float> tab_a(TABLE_SLOTS * n, 0.5f), tab_b = tab_a;
        // plain
        blockDim = {256, 1, 1}; gridDim = {(u32)(((row1 - row0) * l + 255) / 256), 1, 1};
        for (u32 b = 0; b < gridDim.x; b++) for (u32 t = 0; t < 256; t++) {
            blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0};
            phase2(s, n, l, r, k, row0, row1, offsets.data(), state.data(), below.data(), above.data(), delay.data(), ring_a.data(), tab_a.data(), washout.data());
        }
        gridDim = {(u32)((l + 31) / 32), (u32)((row1 - row0 + 31) / 32), 1};
        for (u32 by = 0; by < gridDim.y; by++) for (u32 bx = 0; bx < gridDim.x; bx++) {
            std::fill(std::begin(shared_mem), std::end(shared_mem), 0xAA);
            std::barrier<> b(256); bar = &b;
            std::vector<std::thread> ts;
            for (u32 t = 0; t < 256; t++) ts.emplace_back([&, t, bx, by] {
                blockIdx = {bx, by, 0}; threadIdx = {t, 0, 0};
                phase2_tiled(s, n, l, r, k, row0, row1, offsets.data(), state.data(), below.data(), above.data(), delay.data(), ring_b.data(), tab_b.data(), washout.data());
            });
            for (auto &t : ts) t.join();
        }
        bool same = ring_a == ring_b && tab_a == tab_b;
        bool changed = table ? tab_a != std::vector<float>(TABLE_SLOTS * n, 0.5f) : ring_a != std::vector<u32>(EXP_SLOTS * n, 7);
        printf("l %llu rows %llu r %llu k %u rows [%llu,%llu) table %u: %s%s\n", l, rows, r, k, row0, row1, table, same ? "same" : "DIFFERENT", changed ? "" : " (nothing deposited!)");
        bad += !same || !changed;
    }
    printf(bad ? "FAIL\n" : "all equal\n");
    return bad != 0;
}
