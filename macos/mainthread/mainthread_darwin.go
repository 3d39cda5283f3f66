package mainthread

import (
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/ebitengine/purego"

	"github.com/harkapp/hark/internal/ns"
)

var (
	loadOnce sync.Once
	loadErr  error

	// void dispatch_async_f(dispatch_queue_t queue, void *context, dispatch_function_t work);
	dispatchAsyncF func(queue, context, work uintptr)
	// int pthread_main_np(void); non-zero on the main thread.
	pthreadMainNP func() int32

	mainQueue  uintptr // &_dispatch_main_q: dispatch_get_main_queue() is an inline returning it
	trampoline uintptr // C function pointer: void work(void *context)
	jobs       registry
)

func load() error {
	loadOnce.Do(func() {
		lib, err := purego.Dlopen("/usr/lib/libSystem.B.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = fmt.Errorf("mainthread: %w", err)
			return
		}
		if err := ns.Funcs(
			ns.Sym{Lib: lib, Fn: &dispatchAsyncF, Name: "dispatch_async_f"},
			ns.Sym{Lib: lib, Fn: &pthreadMainNP, Name: "pthread_main_np"},
		); err != nil {
			loadErr = fmt.Errorf("mainthread: %w", err)
			return
		}
		if mainQueue, err = purego.Dlsym(lib, "_dispatch_main_q"); err != nil {
			loadErr = fmt.Errorf("mainthread: main queue: %w", err)
			return
		}
		// One callback for every job: purego callbacks are a few thousand
		// at most and never freed, so the job is chosen by context id.
		trampoline = purego.NewCallback(func(ctx uintptr) {
			if err := jobs.runJob(ctx); err != nil {
				if _, ok := err.(*PanicError); ok {
					// A panic in an Async job has no waiter: log it
					// rather than crash the app inside libdispatch.
					log.Printf("%v", err)
				}
			}
		})
	})
	return loadErr
}

// IsMain reports whether the calling goroutine runs on the main thread.
func IsMain() bool {
	if load() != nil {
		return false
	}
	return pthreadMainNP() != 0
}

// Async queues f on the main thread and returns at once.
func Async(f func()) error {
	if err := load(); err != nil {
		return err
	}
	dispatchAsyncF(mainQueue, jobs.put(f), trampoline)
	return nil
}

// DefaultTimeout bounds Sync: long enough for a busy main thread, short
// enough that calling before the app's run loop starts fails visibly
// instead of hanging.
const DefaultTimeout = 10 * time.Second

// Sync runs f on the main thread and waits for it (inline when already
// there), giving up after DefaultTimeout. It is dispatch_async_f plus a
// channel rather than dispatch_sync_f: the waiting goroutine parks in Go
// instead of pinning an OS thread inside libdispatch, and it can give up.
func Sync(f func()) error { return Call(f, DefaultTimeout) }

// Call runs f on the main thread and waits up to timeout (0: forever). On
// ErrTimeout f has not run and never will, so no half-done AppKit work is
// left behind. A panic in f comes back as *PanicError.
func Call(f func(), timeout time.Duration) error {
	if err := load(); err != nil {
		return err
	}
	if pthreadMainNP() != 0 {
		return runRecover(f)
	}
	return call(func(job func()) {
		dispatchAsyncF(mainQueue, jobs.put(job), trampoline)
	}, f, timeout)
}
