// Miller's tree search for Langford pairings L(2,n) (see src/workloads/langford/miller.rs for the
// algorithm and the host side). Compiled at start by NVRTC.
//
// A placement state is a u64 mask of the occupied positions 0..2n-1. Placing number k at
// position a occupies bits a and a+k+1. The host has already placed n, n-1, ..., k0+1 in
// each of `count` sub-prefixes (k0 >= 1: the host counts complete sequences itself), and
// thread i finishes prefixes[i] by placing k0, k0-1, ..., 1 with iterative backtracking over
// an explicit stack (no recursion: the device stack would need a fixed size per thread
// anyway, and calls would cost more than the loop).
//
// totals: [0] solutions (unweighted), [1] nodes = successful placements made by the threads.
// Counts are summed per block (the prelude's block_add) and added to global memory once per
// block, so the global atomics do not serialise the grid.

// n <= 32, so at most 32 numbers are left to place.
#define MAX_LEVELS 32

extern "C" __global__ void miller_count(const u64 *prefixes, u64 count, u64 full, u32 k0, u64 *totals) {
    u64 solutions = 0, nodes = 0;
    u64 i = thread_index();
    // Threads past the end still take part in the block reduction below.
    if (i < count) {
        // Level l places number k0 - l; masks[l] is the state before that placement and
        // cand[l] the positions for it not tried yet.
        u64 masks[MAX_LEVELS];
        u64 cand[MAX_LEVELS];
        masks[0] = prefixes[i];
        u64 free = full & ~masks[0];
        // Position a is a candidate for k when bits a and a+k+1 are both free; shifting
        // `free` (which has no bits at or above 2n) also rules out a+k+1 >= 2n.
        cand[0] = free & (free >> (k0 + 1));
        int level = 0;
        while (level >= 0) {
            u64 c = cand[level];
            if (c == 0) {
                level--;
                continue;
            }
            int a = __ffsll((long long)c) - 1;
            cand[level] = c & (c - 1);
            u32 k = k0 - level;
            u64 m = masks[level] | (1ull << a) | (1ull << (a + k + 1));
            nodes++;
            if (k == 1) {
                solutions++;
                continue;
            }
            level++;
            masks[level] = m;
            free = full & ~m;
            // The next number is k - 1, so its second copy sits (k - 1) + 1 = k further on.
            cand[level] = free & (free >> k);
        }
    }

    const int index[2] = {0, 1};
    const u64 value[2] = {solutions, nodes};
    block_add(totals, index, value);
}
