package cpu

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
	"golang.org/x/sys/unix"
)

// memBreakdown prints where a TestPackedModelMemory child's memory is at
// one stage: the process's resident anonymous and file pages, the Go
// heap, and, once loaded, the executor's parts (MB = 10^6 bytes).
func memBreakdown(stage string, e *Exec) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st, _ := os.ReadFile("/proc/self/status")
	var rss []string
	for _, l := range strings.Split(string(st), "\n") {
		for _, k := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if v, ok := strings.CutPrefix(l, k); ok {
				var kb float64
				fmt.Sscan(v, &kb)
				rss = append(rss, fmt.Sprintf("%s %.1f", strings.TrimSuffix(k, ":"), kb*1024/1e6))
			}
		}
	}
	fmt.Printf("BREAKDOWN %-6s %s, Go heap in use %.1f\n", stage, strings.Join(rss, ", "), float64(ms.HeapInuse)/1e6)
	if e == nil {
		return
	}
	kinds := map[plan.BufKind]int{}
	for _, b := range e.bufs {
		if b.kind != plan.Scratch {
			kinds[b.kind] += len(b.b)
		}
	}
	w := 0
	for _, r := range e.wsf {
		w += 4 * len(r)
	}
	fmt.Printf("BREAKDOWN %-6s packs %.1f (originals released %.1f), KV and state %.1f, IO %.2f, scratch arena %.2f resident of %.2f laid out (%.2f declared), attention scratch %.2f resident of %.2f, GEMM activations %.2f resident of %.2f, other executor rows %.2f; ranges dropped %.2f in %d passes\n",
		stage, float64(e.packed)/1e6, float64(e.released)/1e6, float64(kinds[plan.State])/1e6, float64(kinds[plan.IO])/1e6,
		float64(resident(e.arena.b))/1e6, float64(e.arenaTouched)/1e6, float64(declaredScratch(e))/1e6,
		float64(resident(e.attn.b))/1e6, float64(len(e.attn.b))/1e6, float64(resident(e.mm.qact.b))/1e6, float64(len(e.mm.qact.b))/1e6,
		float64(4*len(e.act)+len(e.mm.act)+w)/1e6, float64(e.dropped)/1e6, e.nDrops)
}

// resident is the bytes of b's pages in memory (mincore).
func resident(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, err := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); err != 0 {
		return 0
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n * page
}

// declaredScratch is the bytes of the plan's Scratch buffers, each apart.
func declaredScratch(e *Exec) int {
	n := 0
	for _, b := range e.bufs {
		if b.kind == plan.Scratch {
			n += len(b.b)
		}
	}
	return n
}
