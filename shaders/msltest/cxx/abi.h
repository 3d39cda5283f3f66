// abi.h: what the generated kernel translation unit and runtime.cpp share.
// No system headers: it is included by msl.h too.
#pragma once
namespace __msl_abi {
typedef void (*CollFn)(void** ops, unsigned mask);
struct Ctx {
    void* bufs[16]; // [[buffer(i)]]
};
struct Ids {
    unsigned tid[3], group[3], tpg[3], ngroups[3], gid[3];
    unsigned linear, lane, simd, nsimd;
    void* tg_dyn; // [[threadgroup(0)]]
};
typedef void (*ThreadFn)(const Ctx*, const Ids*);
struct Entry {
    const char* name;
    ThreadFn fn;
};
// The running fiber's lane and whether its SIMD-group has 32 lanes, kept
// current by the runtime at every switch so kernels read them inline.
struct Cur {
    unsigned lane;
    int simd_complete;
};
extern __attribute__((tls_model("initial-exec"))) thread_local Cur cur;
} // namespace __msl_abi
extern "C" const __msl_abi::Entry msl_entries[];
extern "C" const int msl_nentries;
extern "C" void msl_set_constants(const unsigned* values);
