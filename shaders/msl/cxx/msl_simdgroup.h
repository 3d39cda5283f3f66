// msl_simdgroup.h: the simdgroup-matrix emulation written once for both
// targets of the MSL translation, the CPU executor
// (shaders/msltest/cxx/msl.h) and CUDA (cuda/cxx/msl_cuda.h): storage,
// fill, load, store and the products.
//
// Metal spreads an 8x8 matrix over the 32 lanes of a SIMD-group: lane l
// holds row l/4, columns 2(l%4) and 2(l%4)+1 (thread_elements), and so
// does every target here. A product needs other lanes' elements (the row
// of A and the two columns of B the lane's own two elements take), which
// is what the targets do differently: a CUDA lane shuffles a register
// from a warp-mate, while the executor runs a SIMD-group's lanes one after
// another as fibers, where each shuffle would be a collective (a switch
// through all 32 fibers). So each target defines, inside namespace metal
// and before including this file:
//   MSL_SG_LANE(), this thread's lane;
//   sg_extra<T>, a base of the matrix holding what the target keeps
//     besides the lane's two elements, told of each fill (diag, fill),
//     load (loaded: the source, its row stride, transposed) and other
//     change of the lane's elements (changed: a product, a write through
//     thread_elements): empty on CUDA; the executor keeps the whole matrix
//     while it is known (after a fill or load), so that the usual
//     load-load-multiply loop needs no collective;
//   sg_peers<TA, TB>, built from a product's operands,
//     sg_peers<TA, TB> p(a, b MSL_SG_SITE_ARG), whose p.a(j, s) and
//     p.b(j, s) are element j (0 or 1) of lane s's A and B: on CUDA a
//     shuffle per read; in the executor a read of the lane's whole copies
//     when both are known, else one collective a product that copies
//     every lane's four values (either fails unless all 32 lanes take
//     part, as Metal requires);
//   MSL_SG_INLINE, the product's inlining attribute (the executor forces
//   it, so its fast path's reads fold into the loop; empty for CUDA);
//   MSL_SG_SITE_PARAM and MSL_SG_SITE_ARG, the executor's call-site
//   parameter for its error messages (", MSL_SITE" and ", __site"; empty
//   for CUDA).
#pragma once

template <class T, int R, int C> struct simdgroup_matrix : sg_extra<T> {
    static_assert(R == 8 && C == 8, "only 8x8 simdgroup matrices are supported");
    typedef T elem_t;
    typedef T e2 __attribute__((ext_vector_type(2)));
    e2 e;
    simdgroup_matrix() = default;
    explicit simdgroup_matrix(T diag) {
        unsigned l = MSL_SG_LANE(), r = l / 4, c = 2 * (l % 4);
        e.x = r == c ? diag : (T)0;
        e.y = r == c + 1 ? diag : (T)0;
        this->diag(diag);
    }
    thread e2& thread_elements() { // the caller may write them
        this->changed();
        return e;
    }
    const thread e2& thread_elements() const { return e; }
};

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;

template <class T, int R, int C> inline simdgroup_matrix<T, R, C> make_filled_simdgroup_matrix(T v) {
    simdgroup_matrix<T, R, C> m;
    m.e.x = v;
    m.e.y = v;
    m.fill(v);
    return m;
}

template <class T, class U>
inline void simdgroup_load(thread simdgroup_matrix<T, 8, 8>& d, const U* src, ulong elements_per_row = 8,
                           ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    unsigned l = MSL_SG_LANE();
    ulong r = l / 4, c = 2 * (l % 4);
    const U* p = src + matrix_origin.y * elements_per_row + matrix_origin.x;
    if (!transpose_matrix) {
        d.e.x = (T)p[r * elements_per_row + c];
        d.e.y = (T)p[r * elements_per_row + c + 1];
    } else {
        d.e.x = (T)p[c * elements_per_row + r];
        d.e.y = (T)p[(c + 1) * elements_per_row + r];
    }
    d.loaded(p, elements_per_row, transpose_matrix);
}

template <class T, class U>
inline void simdgroup_store(const thread simdgroup_matrix<T, 8, 8>& s, U* dst, ulong elements_per_row = 8,
                            ulong2 matrix_origin = 0, bool transpose_matrix = false) {
    unsigned l = MSL_SG_LANE();
    ulong r = l / 4, c = 2 * (l % 4);
    U* p = dst + matrix_origin.y * elements_per_row + matrix_origin.x;
    const thread auto& v = s.thread_elements();
    for (int j = 0; j < 2; j++) {
        ulong row = r, col = c + j;
        if (transpose_matrix) { ulong t = row; row = col; col = t; }
        p[row * elements_per_row + col] = (U)(j == 0 ? v.x : v.y);
    }
}

// The products of one element are summed in k order, in float, on every
// target.
template <class TD, class TA, class TB, class TC>
MSL_SG_INLINE inline void simdgroup_multiply_accumulate(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                                          const thread simdgroup_matrix<TB, 8, 8>& b,
                                          const thread simdgroup_matrix<TC, 8, 8>& c MSL_SG_SITE_PARAM) {
    unsigned l = MSL_SG_LANE(), r = l / 4, q = l % 4;
    sg_peers<TA, TB> p(a, b MSL_SG_SITE_ARG);
    float acc0 = (float)c.e.x, acc1 = (float)c.e.y;
    for (unsigned k = 0; k < 8; k++) {
        float ark = p.a(k & 1, r * 4 + k / 2);
        float bk0 = p.b(0, k * 4 + q);
        float bk1 = p.b(1, k * 4 + q);
        acc0 += ark * bk0;
        acc1 += ark * bk1;
    }
    d.e.x = (TD)acc0;
    d.e.y = (TD)acc1;
    d.changed();
}

template <class TD, class TA, class TB>
inline void simdgroup_multiply(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                               const thread simdgroup_matrix<TB, 8, 8>& b MSL_SG_SITE_PARAM) {
    simdgroup_matrix<TD, 8, 8> z = make_filled_simdgroup_matrix<TD, 8, 8>((TD)0);
    simdgroup_multiply_accumulate(d, a, b, z MSL_SG_SITE_ARG);
}
