// The multi-spin coded Metropolis, tally and Wolff kernels of kernels/spin.cu, compiled as
// host C++ (shim.h stands in for the CUDA constructs, one thread at a time; a half-sweep's
// threads touch disjoint words, so any order is a valid schedule) and run on 1 to 4 slabs
// with their halo exchange, against site-by-site references: the CPU's Metropolis rule (the
// site's bit-sliced uniform assembled whole against table[2e]) over 4 sweeps from a hot start in 2D and 3D, the satisfied
// bonds and state counts, and Wolff clusters as the component of the active bonds (draw at
// b·d + a) between old-state sites, across slabs. Run by scripts/emulate-kernels (needs
// g++); not part of CI.
#include "shim.h"
#include <cmath>
#include "spin_sections.h"  // written by scripts/emulate-kernels

struct Lat { u32 dim; u64 l, sites, plane; };
u64 coord(const Lat &L, u64 g, u32 a) { u64 st = 1; for (u32 i = a + 1; i < L.dim; i++) st *= L.l; return g / st % L.l; }
u64 step(const Lat &L, u64 g, u32 a, int dir) {
    u64 st = 1; for (u32 i = a + 1; i < L.dim; i++) st *= L.l;
    u64 x = g / st % L.l;
    if (dir > 0) return x + 1 < L.l ? g + st : g - (L.l - 1) * st;
    return x > 0 ? g - st : g + (L.l - 1) * st;
}
u32 colour_of(const Lat &L, u64 g) { u64 s = 0; for (u32 a = 0; a < L.dim; a++) s += coord(L, g, a); return s & 1; }

struct Slab { u64 first, thick; u32 rows, wr, l, rpp, fp; u64 offset; std::vector<u32> w; std::vector<u8> f; };
Slab make(const Lat &L, int P, int r) {
    Slab s; u64 a = L.l * r / P, b = L.l * (r + 1) / P;
    s.first = a; s.thick = b - a; s.l = L.l; s.rpp = L.plane / L.l; s.rows = s.thick * s.rpp; s.wr = L.l / 64;
    s.fp = a & 1; s.offset = a * L.plane;
    s.w.assign((size_t)(s.rows + 2 * s.rpp) * 2 * s.wr, 0);
    s.f.assign(s.thick * L.plane + 2 * L.plane, 0);
    return s;
}
#define GEOM(s) s.rows, s.wr, s.l, s.rpp, s.fp, s.offset
void exchange_words(std::vector<Slab> &S) {
    int P = S.size();
    for (int r = 0; r < P; r++) {
        Slab &me = S[r], &below = S[(r + P - 1) % P], &above = S[(r + 1) % P];
        size_t pw = (size_t)me.rpp * 2 * me.wr;
        size_t btop = (size_t)below.rows * 2 * below.wr;  // below's top plane starts at pw + btop - pw
        memcpy(&me.w[0], &below.w[btop], pw * 4);
        memcpy(&me.w[pw + (size_t)me.rows * 2 * me.wr], &above.w[pw], pw * 4);
    }
}
void exchange_bytes(std::vector<Slab> &S, u64 plane) {
    int P = S.size();
    for (int r = 0; r < P; r++) {
        Slab &me = S[r], &below = S[(r + P - 1) % P], &above = S[(r + 1) % P];
        memcpy(&me.f[0], &below.f[below.thick * plane], plane);
        memcpy(&me.f[plane + me.thick * plane], &above.f[plane], plane);
    }
}
u8 get_bit(const Lat &L, const Slab &s, u64 i) {
    u64 rho = i / L.l, x = i % L.l;
    u64 x0 = rho / s.rpp, r = L.dim == 3 ? rho % L.l : 0;
    u32 c = (s.fp + x0 + r + x) & 1;  // colour of the site
    u64 j = x / 2;
    return (s.w[((rho + s.rpp) * 2 + c) * s.wr + j / 32] >> (j % 32)) & 1;
}
int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

// Site g's 53-bit Metropolis uniform, assembled whole (model.rs metropolis_accept): bit j of
// planes 0..53 of its acceptance word, most significant first.
u64 site_uniform(u64 key, u64 g, u64 l) {
    u64 x = g % l, word = (g / l * 2 + (x & 1)) * ((l + 63) / 64) + x / 64;
    u32 lane = (u32)(x >> 1) & 31;
    u64 u = 0;
    for (u32 k = 0; k < 53; k++) u = u << 1 | ((draw(key, 2 * (32 * word + k / 2)) >> (32 * (k & 1) + lane)) & 1);
    return u;
}

void metropolis_case(u32 dim, u64 l, int P, double beta) {
    Lat L{dim, l, 1, 1}; for (u32 a = 0; a < dim; a++) L.sites *= l; L.plane = L.sites / l;
    std::vector<Slab> S; for (int r = 0; r < P; r++) S.push_back(make(L, P, r));
    u32 z = 2 * dim; std::vector<u64> table(2 * z + 1);
    for (int de = -(int)z; de <= (int)z; de++) table[de + z] = (u64)llround(exp(-2 * beta * (de > 0 ? de : 0)) * 9007199254740992.0);
    u64 hot = mix64(12345 + dim * 7 + l);
    std::vector<u8> ref(L.sites);
    for (u64 g = 0; g < L.sites; g++) ref[g] = draw(hot, g) >> 63;
    for (auto &s : S) for (emu_thread = 0; emu_thread < (u64)s.rows * 2 * s.wr; emu_thread++) spin_msc_start(s.w.data(), GEOM(s), hot, 1);
    for (int sweep = 0; sweep < 4; sweep++) {
        for (u32 c = 0; c < 2; c++) {
            u64 key = mix64(sweep * 2 + c + 99);
            std::vector<u8> before = ref;
            for (u64 g = 0; g < L.sites; g++) {
                if (colour_of(L, g) != c) continue;
                u32 e = 0; for (u32 a = 0; a < dim; a++) for (int d : {-1, 1}) e += before[step(L, g, a, d)] == before[g];
                if (2 * e <= z || site_uniform(key, g, L.l) < table[2 * e]) ref[g] ^= 1;
            }
            exchange_words(S);
            for (auto &s : S) for (emu_thread = 0; emu_thread < (u64)s.rows * s.wr; emu_thread++) {
                if (dim == 2) spin_msc_metropolis_2d(s.w.data(), GEOM(s), c, key, table.data());
                else spin_msc_metropolis_3d(s.w.data(), GEOM(s), c, key, table.data());
            }
        }
        u64 diff = 0;
        for (auto &s : S) for (u64 i = 0; i < s.thick * L.plane; i++) diff += get_bit(L, s, i) != ref[s.offset + i];
        CHECK(diff == 0, "metropolis %uD L=%llu P=%d beta=%.2f sweep %d: %llu sites differ", dim, l, P, beta, sweep, diff);
    }
    exchange_words(S);
    u64 counts[3] = {0, 0, 0};
    for (auto &s : S) for (emu_thread = 0; emu_thread < (u64)s.rows * s.wr; emu_thread++) {
        if (dim == 2) spin_msc_tally_2d(s.w.data(), GEOM(s), counts); else spin_msc_tally_3d(s.w.data(), GEOM(s), counts);
    }
    u64 sat = 0, ones = 0;
    for (u64 g = 0; g < L.sites; g++) { ones += ref[g]; for (u32 a = 0; a < dim; a++) sat += ref[step(L, g, a, 1)] == ref[g]; }
    CHECK(counts[0] == sat && counts[2] == ones && counts[1] == L.sites - ones, "tally %uD L=%llu P=%d", dim, l, P);
    u64 changed = 0; for (u64 g = 0; g < L.sites; g++) changed += ref[g] != (draw(hot, g) >> 63);
    printf("metropolis %uD L=%llu P=%d beta=%.2f: %llu of %llu sites changed, satisfied %llu, ones %llu\n", dim, l, P, beta, changed, L.sites, sat, ones);
}

void wolff_case(u32 dim, u64 l, int P, u32 q, double K, bool ordered = false) {
    Lat L{dim, l, 1, 1}; for (u32 a = 0; a < dim; a++) L.sites *= l; L.plane = L.sites / l;
    std::vector<Slab> S; for (int r = 0; r < P; r++) S.push_back(make(L, P, r));
    u64 threshold = (u64)llround(-expm1(-K) * 9007199254740992.0);
    std::vector<u8> ref(L.sites);
    for (u64 g = 0; g < L.sites; g++) ref[g] = ordered ? 0 : (u8)(((draw(77, g) >> 32) * q) >> 32);
    for (auto &s : S) for (u64 i = 0; i < s.thick * L.plane; i++) s.f[L.plane + i] = ref[s.offset + i];
    for (int k = 0; k < 6; k++) {
        u64 key = mix64(1000 + k);
        u64 seed = draw(key, 0) % L.sites; u8 old = ref[seed]; u8 fresh = (old + 1 + (k % (q - 1))) % q;
        // Reference: BFS over active bonds between old-state sites.
        std::vector<u64> stack{seed}; ref[seed] = fresh; u64 size_ref = 1;
        while (!stack.empty()) {
            u64 g = stack.back(); stack.pop_back();
            for (u32 a = 0; a < dim; a++) for (int d : {1, -1}) {
                u64 n = step(L, g, a, d), bond = d > 0 ? g : n;
                if ((draw(key, bond * dim + a) >> 11) >= threshold) continue;
                if (ref[n] == old) { ref[n] = fresh; stack.push_back(n); size_ref++; }
            }
        }
        // Emulated kernels, level by level.
        std::vector<std::vector<u64>> front(P), next(P), out(P);
        for (int r = 0; r < P; r++) {
            out[r].assign(2 * L.plane, 0);
            u64 lo = S[r].offset;
            if (seed >= lo && seed < lo + S[r].thick * L.plane) { S[r].f[L.plane + seed - lo] = fresh; front[r].push_back(seed - lo); }
        }
        u64 size = 1;
        for (;;) {
            u64 total = 0;
            std::vector<u64> cnt(3 * P, 0);
            for (int r = 0; r < P; r++) {
                next[r].assign(S[r].thick * L.plane + 1, 0);
                for (emu_thread = 0; emu_thread < front[r].size(); emu_thread++)
                    spin_wolff_grow(S[r].f.data(), front[r].data(), front[r].size(), next[r].data(), out[r].data(), &cnt[3 * r], dim, l, L.plane, S[r].offset, S[r].thick * L.plane, L.sites, key, threshold, old, fresh);
            }
            for (int r = 0; r < P; r++) {
                std::vector<u64> got;
                int below = (r + P - 1) % P, above = (r + 1) % P;
                // What the rank above sent down and the rank below sent up.
                for (u64 i = 0; i < cnt[3 * above + 1]; i++) got.push_back(out[above][i]);
                for (u64 i = 0; i < cnt[3 * below + 2]; i++) got.push_back(out[below][L.plane + i]);
                if (P == 1) CHECK(got.empty(), "one slab sends nothing");
                if (P == 1) got.clear();
                for (emu_thread = 0; emu_thread < got.size(); emu_thread++)
                    spin_wolff_receive(S[r].f.data(), got.data(), got.size(), next[r].data(), &cnt[3 * r], L.plane, S[r].offset, old, fresh);
            }
            for (int r = 0; r < P; r++) { next[r].resize(cnt[3 * r]); front[r] = next[r]; total += cnt[3 * r]; }
            size += total;
            if (!total) break;
        }
        u64 diff = 0;
        for (auto &s : S) for (u64 i = 0; i < s.thick * L.plane; i++) diff += s.f[L.plane + i] != ref[s.offset + i];
        CHECK(diff == 0 && size == size_ref, "wolff %uD L=%llu P=%d q=%u cluster %d: %llu differ, size %llu vs %llu", dim, l, P, q, k, diff, size, size_ref);
        if (k == 0) printf("wolff %uD L=%llu P=%d q=%u K=%.2f: first cluster %llu sites\n", dim, l, P, q, K, size_ref);
    }
}

int main() {
    for (int P : {1, 2, 3}) {
        metropolis_case(2, 128, P, 0.3);
        metropolis_case(2, 192, P, 0.6);
        metropolis_case(3, 64, P, 0.22);
    }
    metropolis_case(2, 64, 4, 0.44);
    for (int P : {1, 2, 3}) {
        wolff_case(2, 66, P, 2, 2 * 0.44);
        wolff_case(3, 12, P, 3, 1.0);
        wolff_case(2, 32, P, 2, 2 * 0.7);
        wolff_case(2, 64, P, 2, 2 * 0.4407, true);
        wolff_case(3, 16, P, 3, 0.6, true);
    }
    printf(fails ? "%d FAILURES\n" : "all equal\n", fails);
    return fails != 0;
}
