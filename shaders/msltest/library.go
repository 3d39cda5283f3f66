package msltest

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/harkapp/hark/shaders"
	"github.com/harkapp/hark/shaders/msl"
)

// Library is a compiled set of .metal files, loaded into this process.
type Library struct {
	reverse atomic.Bool
	profMu  sync.Mutex
	prof    map[string]*FuncStat // nil unless $HARK_MSLTEST_PROFILE is set
	path    string
	entries map[string]int32
	launch  func(entry int32, geom *uint32, bufs *uintptr, consts *uint32, err *byte, errlen int32) int32
}

var (
	libMu sync.Mutex
	libs  = map[string]*Library{}
)

// Shaders returns the library of Hark's kernels (shaders.Source order),
// compiling it on first use.
func Shaders() (*Library, error) {
	var srcs []msl.Source
	for _, name := range shaders.Files() {
		b, err := shaders.File(name)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, msl.Source{Name: name, Text: string(b)})
	}
	return Open(srcs)
}

// Open compiles (or finds in the cache) and loads a library made of srcs.
func Open(srcs []msl.Source) (*Library, error) {
	unit, names, err := generate(srcs)
	if err != nil {
		return nil, fmt.Errorf("msltest: %w", err)
	}
	libMu.Lock()
	defer libMu.Unlock()
	if l, ok := libs[unit]; ok {
		return l, nil
	}
	path, err := build(unit)
	if err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("msltest: loading %s: %w", path, err)
	}
	l := &Library{path: path, entries: map[string]int32{}}
	var initFn func(n int32) int32
	purego.RegisterLibFunc(&initFn, h, "msl_init")
	purego.RegisterLibFunc(&l.launch, h, "msl_launch")
	for i, n := range names {
		l.entries[n] = int32(i)
	}
	initFn(int32(workers()))
	l.reverse.Store(os.Getenv("HARK_MSLTEST_ORDER") == "reverse")
	if os.Getenv("HARK_MSLTEST_PROFILE") != "" {
		l.prof = map[string]*FuncStat{}
	}
	libs[unit] = l
	return l, nil
}

// workers is the number of CPU threads running threadgroups:
// $HARK_MSLTEST_THREADS, else GOMAXPROCS.
func workers() int {
	if n, err := strconv.Atoi(os.Getenv("HARK_MSLTEST_THREADS")); err == nil && n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// SetReverse makes later launches run the threads of each threadgroup in
// reverse index order (last SIMD-group first), to catch kernels that
// depend on the order SIMD-groups run in ($HARK_MSLTEST_ORDER=reverse sets
// it for a whole run). It returns the previous setting.
func (l *Library) SetReverse(on bool) bool { return l.reverse.Swap(on) }

// Has reports whether the library defines kernel function name.
func (l *Library) Has(name string) bool { _, ok := l.entries[name]; return ok }

// Names lists the library's kernel functions.
func (l *Library) Names() []string {
	out := make([]string, 0, len(l.entries))
	for n := range l.entries {
		out = append(out, n)
	}
	return out
}

// FuncStat is the time spent in one kernel function (HARK_MSLTEST_PROFILE).
type FuncStat struct {
	Function string
	Launches int
	Threads  int64
	Time     time.Duration
}

// Profile returns the per-function times since the library was loaded,
// slowest first, or nil when $HARK_MSLTEST_PROFILE was not set.
func (l *Library) Profile() []FuncStat {
	l.profMu.Lock()
	defer l.profMu.Unlock()
	var out []FuncStat
	for _, s := range l.prof {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time > out[j].Time })
	return out
}

// Run executes one launch. bufs[i] is [[buffer(i)]] (nil for unbound);
// the memory must stay valid (and unmoved) for the call, which Go heap and
// mapped memory are.
func (l *Library) Run(ln *shaders.Launch, bufs *[16]unsafe.Pointer) error {
	idx, ok := l.entries[ln.Function]
	if !ok {
		return fmt.Errorf("msltest: no kernel function %q in the library", ln.Function)
	}
	var geom [8]uint32
	copy(geom[:3], ln.Groups[:])
	copy(geom[3:6], ln.Threads[:])
	geom[6] = ln.Threadgroup
	if l.reverse.Load() {
		geom[7] = 1
	}
	var consts [msl.MaxConstants]uint32
	for _, c := range ln.Constants {
		if c.Index < 0 || c.Index >= msl.MaxConstants {
			return fmt.Errorf("msltest: %s: function constant index %d out of range", ln.Function, c.Index)
		}
		consts[c.Index] = c.Value
	}
	var raw [16]uintptr
	for i, p := range bufs {
		raw[i] = uintptr(p)
	}
	var errb [512]byte
	if l.prof != nil {
		start := time.Now()
		defer func() {
			l.profMu.Lock()
			st := l.prof[ln.Function]
			if st == nil {
				st = &FuncStat{Function: ln.Function}
				l.prof[ln.Function] = st
			}
			st.Launches++
			st.Threads += int64(ln.Groups[0]) * int64(ln.Groups[1]) * int64(ln.Groups[2]) * int64(ln.Threads[0]*ln.Threads[1]*ln.Threads[2])
			st.Time += time.Since(start)
			l.profMu.Unlock()
		}()
	}
	rc := l.launch(idx, &geom[0], &raw[0], &consts[0], &errb[0], int32(len(errb)))
	runtime.KeepAlive(bufs)
	if rc != 0 {
		n := 0
		for n < len(errb) && errb[n] != 0 {
			n++
		}
		return fmt.Errorf("msltest: %s", errb[:n])
	}
	return nil
}
