// Host emulation of kernels/generators.cu's Erdős–Rényi split tree (er_split, er_chunks),
// driven as src/graph/generators/erdos_renyi_gpu.rs drives them, a "thread" at a time. Built
// and run by the unit test erdos_renyi_gpu::tests (g++, no FMA on x86-64: each operation
// rounded as the GPU's, compiled with --fmad=false, rounds it), which writes er_kernel.h
// (the prelude's draw and the file's split-tree section) beside this file and compares the
// chunks with the host's descent.
// stdin: one line per rank, `Descent::params`; stdout: a line per rank, "first,count" of
// each chunk, then "too_big" when a chunk draws more than ER_MOST slots.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>
typedef unsigned long long u64;
typedef unsigned int u32;
#define __device__
#define __forceinline__ inline
#define __global__
#define ER_MOST 4096
static u64 emu_thread;
inline u64 thread_index() { return emu_thread; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; memcpy(&v, &d, 8); return v; }
inline u64 __umul64hi(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }
inline u64 min(u64 a, u64 b) { return a < b ? a : b; }
inline u64 max(u64 a, u64 b) { return a > b ? a : b; }
inline void atomicOr(unsigned long long *a, unsigned long long v) { *a |= v; }
using std::fabs;
using std::floor;
using std::fmax;
using std::isnan;
using std::sqrt;
#include "er_kernel.h"

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::vector<u64> p;
        for (u64 v; in >> v;) p.push_back(v);
        u64 levels = p[0], start = p[1], width = p[8];
        std::vector<u64> windows(4 * (levels + 1), 0);
        windows[4 * start] = p[7];
        windows[4 * start + 1] = width;
        u64 most = width << (levels - start);
        std::vector<u64> above(2 * most), below(2 * most), chunks(1 + 5 * most);
        std::copy(p.begin() + 9, p.end(), above.begin());
        for (u32 level = start; level < levels; level++) {
            for (emu_thread = 0; emu_thread < width << (level - start); emu_thread++)
                er_split(p.data(), level, windows.data(), above.data(), below.data());
            std::swap(above, below);
        }
        unsigned long long too_big = 0;
        for (emu_thread = 0; emu_thread < std::max(most, 1ULL); emu_thread++)
            er_chunks(p.data(), windows.data(), above.data(), chunks.data(), &too_big);
        for (u64 i = 0; i < chunks[0]; i++) printf("%s%llu,%llu", i ? " " : "", chunks[1 + 5 * i], chunks[2 + 5 * i]);
        printf("%s\n", too_big ? " too_big" : "");
    }
}
