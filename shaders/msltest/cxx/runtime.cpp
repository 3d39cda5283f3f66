// runtime.cpp: runs MSL kernel launches on CPU threads. Each threadgroup
// runs on one worker thread; its threads are cooperative fibers that switch
// only at threadgroup barriers and SIMD-group collectives (see ../README.md).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <thread>
#include <vector>

#include "abi.h"

namespace {

// ---- context switch -----------------------------------------------------------
// x86-64: a hand-written switch (callee-saved registers and the stack
// pointer). Elsewhere, or with -DMSL_UCONTEXT: ucontext (portable, slower).
#if defined(__x86_64__) && !defined(MSL_UCONTEXT)
extern "C" void msl_switch(void** save, void* to);
extern "C" void msl_fiber_start();
asm(R"(
.text
.globl msl_switch
.type msl_switch,@function
msl_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size msl_switch,.-msl_switch
.globl msl_fiber_start
.type msl_fiber_start,@function
msl_fiber_start:
    movq %r12, %rdi
    call msl_fiber_main
    ud2
.size msl_fiber_start,.-msl_fiber_start
)");
struct Ctx {
    void* sp;
};
inline void ctx_switch(Ctx* save, Ctx* to) { msl_switch(&save->sp, to->sp); }
inline void ctx_prefetch(const Ctx* c) {
    __builtin_prefetch(c->sp);
    __builtin_prefetch((char*)c->sp + 64);
}
#else
} // namespace
#include <ucontext.h>
namespace {
struct Ctx {
    ucontext_t uc;
};
inline void ctx_switch(Ctx* save, Ctx* to) { swapcontext(&save->uc, &to->uc); }
inline void ctx_prefetch(const Ctx*) {}
#endif

enum State : uint8_t { RUNNABLE, WAIT_SIMD, WAIT_BAR, DONE };

struct Worker;

struct Fiber {
    Ctx ctx;
    char* stack_lo;
    char* stack_hi;
    Worker* w;
    State state;
    uint32_t linear;  // thread_index_in_threadgroup
    uint32_t tid[3];
    size_t tg_cursor; // next static threadgroup allocation
};

struct Simd {
    void* ops[32];
    __msl_abi::CollFn fn[32];
    unsigned site[32];
    uint32_t lanes; // lanes the SIMD-group started with
    uint32_t live;  // lanes not returned
    uint32_t wait;  // lanes waiting at a collective
};

constexpr size_t kStack = 256 << 10;
constexpr size_t kArena = 64 << 10;
constexpr size_t kMaxTG = 32 << 10; // Metal's threadgroup memory limit

struct Launch {
    const __msl_abi::Entry* entry;
    __msl_abi::Ctx ctx;
    uint32_t groups[3], threads[3];
    uint32_t tg_bytes;
    bool reverse; // run threads (and so SIMD-groups) in reverse index order
    uint32_t ngroups, nthreads;
    std::atomic<uint32_t> next;
    std::atomic<int> failed;
    char err[512];
    std::mutex errmu;
};

void fail(Launch* L, const char* msg) {
    std::lock_guard<std::mutex> g(L->errmu);
    if (!L->failed.exchange(1)) snprintf(L->err, sizeof L->err, "%s", msg);
}

struct Worker {
    std::vector<Fiber> fibers;
    std::vector<Simd> simd;
    char* arena = nullptr;
    size_t poisoned = 0; // arena bytes to poison at each threadgroup start
    Ctx sched{};
    Launch* L = nullptr;
    uint32_t group[3];
    uint32_t live = 0, nbar = 0;
    Fiber* cur = nullptr;

    ~Worker() {
        for (auto& f : fibers) munmap(f.stack_lo - 4096, kStack + 4096);
        free(arena);
    }
    void grow(uint32_t n);
    // pos is the fiber (execution position) running thread linear: the
    // sweep runs threads in index order, or in reverse with L->reverse.
    uint32_t pos(uint32_t linear) const { return L->reverse ? L->nthreads - 1 - linear : linear; }
    void run_group(uint32_t g);
    void complete(Simd& s);
    void release_barrier();
    void exit_thread(Fiber* f);
};

// initial-exec: one instruction per access instead of a __tls_get_addr
// call (these are read at every collective).
__attribute__((tls_model("initial-exec"))) thread_local Worker* tls_worker;
void yield(Fiber* f);
} // namespace
namespace __msl_abi {
__attribute__((tls_model("initial-exec"))) thread_local Cur cur;
}
namespace {

// enter publishes g as the running fiber (Worker::cur and the kernel-side
// lane info); lanes that returned still count for simd_complete: without
// collectives, lanes run to completion one after another.
inline void enter(Worker* w, Fiber* g);
// The high-water mark of static threadgroup allocations of this worker.
__attribute__((tls_model("initial-exec"))) thread_local size_t tg_hw;

void Worker::grow(uint32_t n) {
    if (!arena) arena = (char*)aligned_alloc(64, kArena);
    while (fibers.size() < n) {
        char* m = (char*)mmap(nullptr, kStack + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) abort();
        mprotect(m, 4096, PROT_NONE); // guard page below the stack
        Fiber f{};
        f.stack_lo = m + 4096;
        f.stack_hi = m + 4096 + kStack;
        f.w = this;
        fibers.push_back(f);
    }
    simd.resize((n + 31) / 32);
}

extern "C" void msl_fiber_main(Fiber* f) {
    Worker* w = f->w;
    Launch* L = w->L;
    __msl_abi::Ids ids;
    for (int i = 0; i < 3; i++) {
        ids.tid[i] = f->tid[i];
        ids.group[i] = w->group[i];
        ids.tpg[i] = L->threads[i];
        ids.ngroups[i] = L->groups[i];
        ids.gid[i] = w->group[i] * L->threads[i] + f->tid[i];
    }
    ids.linear = f->linear;
    ids.lane = f->linear % 32;
    ids.simd = f->linear / 32;
    ids.nsimd = (L->nthreads + 31) / 32;
    ids.tg_dyn = w->arena;
    L->entry->fn(&L->ctx, &ids);
    w->exit_thread(f);
    f->state = DONE;
    yield(f);
    __builtin_trap();
}

inline void enter(Worker* w, Fiber* g) {
    w->cur = g;
    __msl_abi::cur.lane = g->linear % 32;
    __msl_abi::cur.simd_complete = w->simd[g->linear / 32].lanes == 0xffffffffu;
}

#if defined(__x86_64__) && !defined(MSL_UCONTEXT)
void start_fiber(Fiber* f) {
    // Stagger the stack tops over a page ("colouring"): identical page
    // offsets would put every fiber's hot frame in the same L1 sets.
    size_t color = (size_t)(f - f->w->fibers.data()) * 7 % 64 * 64;
    uintptr_t top = ((uintptr_t)f->stack_hi - color) & ~(uintptr_t)15;
    void** sp = (void**)top;
    // after the pops and the ret, rsp == top: 16-byte aligned before the
    // stub's call, as the ABI wants
    *--sp = (void*)&msl_fiber_start;  // ret target
    *--sp = nullptr;                  // rbp
    *--sp = nullptr;                  // rbx
    *--sp = f;                        // r12: the fiber
    *--sp = nullptr;                  // r13
    *--sp = nullptr;                  // r14
    *--sp = nullptr;                  // r15
    f->ctx.sp = sp;
}
#else
void uc_entry(unsigned hi, unsigned lo) { msl_fiber_main((Fiber*)(((uintptr_t)hi << 32) | lo)); }
void start_fiber(Fiber* f) {
    getcontext(&f->ctx.uc);
    f->ctx.uc.uc_stack.ss_sp = f->stack_lo;
    f->ctx.uc.uc_stack.ss_size = f->stack_hi - f->stack_lo;
    f->ctx.uc.uc_link = nullptr;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->ctx.uc, (void (*)())uc_entry, 2, (unsigned)(p >> 32), (unsigned)p);
}
#endif

// yield suspends f and runs the next runnable fiber after it directly
// (half the switches of going through the scheduler); the scheduler gets
// control back when none is left in this sweep.
void yield(Fiber* f) {
    Worker* w = f->w;
    uint32_t n = w->L->nthreads;
    for (uint32_t i = (uint32_t)(f - w->fibers.data()) + 1; i < n; i++) {
        Fiber* g = &w->fibers[i];
        if (g->state == RUNNABLE) {
            enter(w, g);
            // the fiber after g is likely next: start loading its frame
            if (i + 1 < n) ctx_prefetch(&w->fibers[i + 1].ctx);
            ctx_switch(&f->ctx, &g->ctx);
            return;
        }
    }
    ctx_switch(&f->ctx, &w->sched);
}

// complete runs the collectives the waiting lanes of s are at: lanes at the
// same call site (and operation) form one collective.
void Worker::complete(Simd& s) {
    uint32_t pending = s.wait;
    while (pending) {
        int first = __builtin_ctz(pending);
        uint32_t mask = 0;
        for (uint32_t m = pending; m; m &= m - 1) {
            int l = __builtin_ctz(m);
            if (s.site[l] == s.site[first] && s.fn[l] == s.fn[first]) mask |= 1u << l;
        }
        s.fn[first](s.ops, mask);
        pending &= ~mask;
    }
    uint32_t base = (uint32_t)(&s - simd.data()) * 32;
    for (uint32_t m = s.wait; m; m &= m - 1) fibers[pos(base + __builtin_ctz(m))].state = RUNNABLE;
    s.wait = 0;
}

void Worker::release_barrier() {
    for (uint32_t i = 0; i < L->nthreads; i++)
        if (fibers[i].state == WAIT_BAR) fibers[i].state = RUNNABLE;
    nbar = 0;
}

void Worker::exit_thread(Fiber* f) {
    Simd& s = simd[f->linear / 32];
    s.live &= ~(1u << (f->linear % 32));
    live--;
    if (s.wait && s.wait == s.live) complete(s);
    if (nbar && nbar == live) release_barrier();
}

void Worker::run_group(uint32_t g) {
    uint32_t gx = L->groups[0], gy = L->groups[1];
    group[0] = g % gx;
    group[1] = (g / gx) % gy;
    group[2] = g / (gx * gy);
    uint32_t n = L->nthreads, tx = L->threads[0], ty = L->threads[1];
    // Threadgroup memory starts as garbage on a GPU: poison it (NaN / -1)
    // so kernels that read before writing fail here too.
    size_t dyn = (L->tg_bytes + 15) & ~(size_t)15;
    if (poisoned < dyn) poisoned = dyn;
    memset(arena, 0xff, poisoned);
    for (uint32_t i = 0; i < n; i++) {
        Fiber& f = fibers[i];
        f.state = RUNNABLE;
        f.linear = pos(i); // pos is its own inverse
        f.tid[0] = f.linear % tx;
        f.tid[1] = (f.linear / tx) % ty;
        f.tid[2] = f.linear / (tx * ty);
        f.tg_cursor = dyn;
        start_fiber(&f);
    }
    for (uint32_t s = 0; s < simd.size(); s++) {
        uint32_t lanes = n - s * 32 >= 32 ? 32 : n - s * 32;
        simd[s].live = simd[s].lanes = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
        simd[s].wait = 0;
    }
    live = n;
    nbar = 0;
    for (;;) {
        bool progress = false;
        for (uint32_t i = 0; i < n; i++) {
            Fiber& f = fibers[i];
            if (f.state != RUNNABLE) continue;
            progress = true;
            enter(this, &f);
            // returns when a fiber finds no runnable one after itself
            ctx_switch(&sched, &f.ctx);
            i = (uint32_t)(cur - fibers.data());
            cur = nullptr;
        }
        if (live == 0) break;
        if (progress) continue;
        // Nobody can run: some lanes of a SIMD-group wait at a barrier while
        // others wait at a collective (divergent code). Complete the
        // collectives with the lanes that are there, as a GPU would.
        bool any = false;
        for (auto& s : simd)
            if (s.wait) {
                complete(s);
                any = true;
            }
        if (!any) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: deadlock in threadgroup (%u,%u,%u): %u threads at a barrier, %u live",
                     L->entry->name, group[0], group[1], group[2], nbar, live);
            fail(L, msg);
            break;
        }
    }
    if (tg_hw > poisoned) poisoned = tg_hw;
}

} // namespace

extern "C" {

void msl_collective(void* op, __msl_abi::CollFn fn, unsigned site) {
    Worker* w = tls_worker;
    Fiber* f = w->cur;
    Simd& s = w->simd[f->linear / 32];
    uint32_t lane = f->linear % 32;
    s.ops[lane] = op;
    s.fn[lane] = fn;
    s.site[lane] = site;
    s.wait |= 1u << lane;
    f->state = WAIT_SIMD;
    if (s.wait == s.live) w->complete(s);
    if (f->state != RUNNABLE) yield(f);
}

void msl_barrier() {
    Worker* w = tls_worker;
    Fiber* f = w->cur;
    f->state = WAIT_BAR;
    w->nbar++;
    if (w->nbar == w->live) w->release_barrier();
    if (f->state != RUNNABLE) yield(f);
}

void* msl_tg_alloc(unsigned long size, unsigned long align) {
    Worker* w = tls_worker;
    Fiber* f = w->cur;
    if (align < 16) align = 16;
    size_t at = (f->tg_cursor + align - 1) & ~(align - 1);
    if (at + size > kMaxTG) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: threadgroup memory exceeds 32 KiB (%zu bytes)", w->L->entry->name, at + size);
        fail(w->L, msg);
        at = 0; // keep running on the arena; the launch reports the error
        if (size > kArena) abort();
    }
    f->tg_cursor = at + size;
    if (f->tg_cursor > tg_hw) tg_hw = f->tg_cursor;
    return w->arena + at;
}



void msl_fail(const char* msg) {
    Worker* w = tls_worker;
    char buf[300];
    snprintf(buf, sizeof buf, "%s: %s", w->L->entry->name, msg);
    fail(w->L, buf);
}

} // extern "C"

// ---- worker pool and launch ---------------------------------------------------
namespace {

struct Pool {
    std::mutex mu;
    std::condition_variable cv, done;
    std::vector<std::thread> threads;
    std::vector<Worker*> workers; // [0] is the launching thread
    Launch* job = nullptr;
    uint64_t gen = 0;
    int want = 0;   // helpers asked to join the current job
    int active = 0; // helpers still working on it
};
Pool* pool;
std::mutex launch_mu;

void work(Worker* w, Launch* L) {
    tls_worker = w;
    w->L = L;
    w->grow(L->nthreads);
    for (;;) {
        uint32_t g = L->next.fetch_add(1);
        if (g >= L->ngroups) break;
        w->run_group(g);
    }
}

void helper(int idx) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(pool->mu);
    for (;;) {
        pool->cv.wait(lk, [&] { return pool->gen != seen && idx <= pool->want; });
        seen = pool->gen;
        Launch* L = pool->job;
        lk.unlock();
        work(pool->workers[idx], L);
        lk.lock();
        if (--pool->active == 0) pool->done.notify_all();
    }
}

} // namespace

extern "C" {

// msl_init starts the worker threads once (n counts the launching thread).
int msl_init(int n) {
    std::lock_guard<std::mutex> g(launch_mu);
    if (pool) return (int)pool->workers.size();
    if (n < 1) n = 1;
    if (n > 256) n = 256;
    pool = new Pool;
    for (int i = 0; i < n; i++) pool->workers.push_back(new Worker);
    for (int i = 1; i < n; i++) {
        pool->threads.emplace_back(helper, i);
        pool->threads.back().detach();
    }
    return n;
}

int msl_count() { return msl_nentries; }
const char* msl_name(int i) { return i >= 0 && i < msl_nentries ? msl_entries[i].name : ""; }

// msl_launch runs one kernel launch to completion. geom: groups[3],
// threads[3], dynamic threadgroup bytes, flags (bit 0: reverse order). bufs: the 16 buffer slots.
// consts: 64 function-constant values. Returns 0, or 1 with err set.
int msl_launch(int entry, const uint32_t* geom, const uintptr_t* bufs, const uint32_t* consts, char* err, int errlen) {
    std::lock_guard<std::mutex> g(launch_mu);
    auto bad = [&](const char* m) {
        snprintf(err, errlen, "%s", m);
        return 1;
    };
    if (!pool) return bad("msl_init was not called");
    if (entry < 0 || entry >= msl_nentries) return bad("unknown kernel entry");
    Launch* L = new Launch;
    L->entry = &msl_entries[entry];
    for (int i = 0; i < 3; i++) {
        L->groups[i] = geom[i];
        L->threads[i] = geom[3 + i];
    }
    L->tg_bytes = geom[6];
    L->reverse = (geom[7] & 1) != 0;
    for (int i = 0; i < 16; i++) L->ctx.bufs[i] = (void*)bufs[i];
    uint64_t ng = (uint64_t)L->groups[0] * L->groups[1] * L->groups[2];
    uint64_t nt = (uint64_t)L->threads[0] * L->threads[1] * L->threads[2];
    int rc = 0;
    if (nt == 0 || nt > 1024) {
        snprintf(err, errlen, "%s: %llu threads per threadgroup (1..1024)", L->entry->name, (unsigned long long)nt);
        rc = 1;
    } else if (ng >= (1ull << 32)) {
        snprintf(err, errlen, "%s: too many threadgroups", L->entry->name);
        rc = 1;
    } else if (L->tg_bytes > kMaxTG) {
        snprintf(err, errlen, "%s: %u bytes of threadgroup memory (max 32 KiB)", L->entry->name, L->tg_bytes);
        rc = 1;
    }
    if (rc || ng == 0) {
        delete L;
        return rc;
    }
    L->ngroups = (uint32_t)ng;
    L->nthreads = (uint32_t)nt;
    L->next = 0;
    L->failed = 0;
    L->err[0] = 0;
    msl_set_constants(consts);
    int helpers = (int)pool->workers.size() - 1;
    if ((uint64_t)helpers > ng - 1) helpers = (int)(ng - 1);
    if (helpers > 0) {
        std::lock_guard<std::mutex> lk(pool->mu);
        pool->job = L;
        pool->want = helpers;
        pool->active = helpers;
        pool->gen++;
        pool->cv.notify_all();
    }
    work(pool->workers[0], L);
    if (helpers > 0) {
        std::unique_lock<std::mutex> lk(pool->mu);
        pool->done.wait(lk, [] { return pool->active == 0; });
    }
    if (L->failed) {
        snprintf(err, errlen, "%s", L->err);
        rc = 1;
    }
    delete L;
    return rc;
}

} // extern "C"

// Software half conversions for clang's __fp16 when the CPU has no F16C
// (round to nearest even, as the hardware does).
extern "C" __attribute__((weak)) float __gnu_h2f_ieee(uint16_t h) {
    uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, f;
    if (e == 0) {
        if (m == 0) {
            f = s;
        } else {
            e = 113;
            while (!(m & 0x400)) { m <<= 1; e--; }
            f = s | (e << 23) | ((m & 0x3ff) << 13);
        }
    } else if (e == 31) {
        f = s | 0x7f800000 | (m << 13);
    } else {
        f = s | ((e + 112) << 23) | (m << 13);
    }
    float r;
    memcpy(&r, &f, 4);
    return r;
}
extern "C" __attribute__((weak)) uint16_t __gnu_f2h_ieee(float x) {
    uint32_t f;
    memcpy(&f, &x, 4);
    uint32_t s = (f >> 16) & 0x8000, a = f & 0x7fffffff;
    if (a >= 0x7f800000) return s | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0);
    if (a >= 0x477ff000) return s | 0x7c00; // rounds to infinity
    if (a < 0x38800000) { // subnormal or zero
        if (a < 0x33000000) return s;
        uint32_t e = a >> 23, m = (a & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; // half subnormal = m * 2^(e-126-24) / 2^-24
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return s | r;
    }
    uint32_t r = ((a - 0x38000000) >> 13);
    uint32_t rem = a & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return s | r;
}
extern "C" __attribute__((weak)) uint16_t __truncsfhf2(float x) { return __gnu_f2h_ieee(x); }
extern "C" __attribute__((weak)) float __extendhfsf2(uint16_t h) { return __gnu_h2f_ieee(h); }
