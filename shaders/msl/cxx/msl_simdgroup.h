// msl_simdgroup.h: the simdgroup-matrix API written once for both targets
// of the MSL translation, the CPU executor (shaders/msltest/cxx/msl.h) and
// CUDA (cuda/cxx/msl_cuda.h). Metal spreads an 8x8 matrix over the 32
// lanes of a SIMD-group: lane l holds row l/4, columns 2(l%4) and
// 2(l%4)+1 (thread_elements). The two targets keep the matrix differently
// (a fiber can see the whole matrix; a CUDA lane holds only its two
// elements and shuffles), so each defines, inside namespace metal and
// before including this file:
//   simdgroup_matrix<T, 8, 8>, with thread_elements() (the lane's two),
//   make_filled_simdgroup_matrix, simdgroup_load and
//   simdgroup_multiply_accumulate(d, a, b, c MSL_SG_SITE_ARG);
//   MSL_SG_LANE(), this thread's lane;
//   MSL_SG_SITE_PARAM and MSL_SG_SITE_ARG, the executor's call-site
//   parameter for its error messages (", MSL_SITE" and ", __site"; empty
//   for CUDA).
// This file adds what is the same for both: the typedefs, the store and
// the plain product.
#pragma once

typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;

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

template <class TD, class TA, class TB>
inline void simdgroup_multiply(thread simdgroup_matrix<TD, 8, 8>& d, const thread simdgroup_matrix<TA, 8, 8>& a,
                               const thread simdgroup_matrix<TB, 8, 8>& b MSL_SG_SITE_PARAM) {
    simdgroup_matrix<TD, 8, 8> z = make_filled_simdgroup_matrix<TD, 8, 8>((TD)0);
    simdgroup_multiply_accumulate(d, a, b, z MSL_SG_SITE_ARG);
}
