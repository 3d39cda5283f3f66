// Shared declarations of every Hark kernel: the Args block (README.md) and,
// as kernels land, the ggml block layouts and dequantisation helpers.
#include <metal_stdlib>
using namespace metal;

struct Args {
    uint p[16];
    uint bind_mask;
    uint grid[3];
};

static inline float argf(constant Args& a, int i) { return as_type<float>(a.p[i]); }
static inline bool has_bind(constant Args& a, int i) { return (a.bind_mask >> i) & 1u; }
