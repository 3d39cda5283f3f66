package cpu

import (
	"cmp"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// Giving a prefill's memory back. A prefill step writes every row of its
// activation buffers (SmolLM2's pp512: 8.7 MB of the arena, attention's
// packed keys 1.3 MB, the quantized GEMM's activations 1.0 MB); a decode
// step touches one row of each (0.1 MB). Without more, those pages stay
// resident for the model's life, beyond issue #37's bound of 1.05 ×
// (file + KV). So once a pass that alone touched at least dropMin bytes
// of the arena is followed by another pass (a prefill by the decode of
// its answer), the executor gives those pages back (MADV_DONTNEED,
// spare.go), with attention's and the GEMM's scratch, which only passes
// of many rows use: the resident set while a model decodes or waits is
// then the packs, the KV cache and what decode touches. The next such
// pass faults them in again (~2,600 zeroed pages for a pp512). Not after
// the pass itself: back-to-back prefills (a long prompt's batches, an
// encoder's windows) would fault them in every time, and at 16 workers
// the faults cost a pp512 ~10% (BENCHMARKS.md, "Memory after prefill
// released").
//
// A pass the plan marks Recurring (a Whisper encoder window, which
// alternates with the decoder's steps) gives nothing back: at 16 workers
// its re-faulted pages cost a transcription ~5% (BENCHMARKS.md, issue
// #37's fourth round); its pages stay until the model closes.
//
// Only what no other pass needs goes: the pages the other passes touch
// (decode's rows, the sampler's scratch) stay, as do those of a buffer
// whose bytes outlive a pass (one no pass binds, the host's; one a pass
// reads before it writes it): a Scratch buffer means nothing after its
// step (engine/README.md), and the arena already lets other passes'
// buffers overwrite its bytes, so a pass never sees what another left.

// dropMin is the least a pass gives back: below it (256 pages) the saving
// is within the process's own RSS noise and the faults that follow are
// pure cost. A variable for tests.
var dropMin int64 = 1 << 20

// arenaDrops finds, per pass, the byte ranges of the arena (page-aligned,
// page is the OS's) to give back after it: the pages it touches that no
// other pass touches and no buffer holds across passes, where they come
// to dropMin bytes or more (nil where not). uses are the passes' uses of
// the Scratch buffers, offs their offsets in the arena.
func arenaDrops(bufs []plan.Buffer, uses [][]*use, offs []int64, page int64) [][][2]int64 {
	touched := make([][][2]int64, len(uses)) // per pass, its pages
	var held [][2]int64
	for i, b := range bufs {
		if b.Kind != plan.Scratch || offs[i] < 0 || b.Size <= 0 {
			continue
		}
		if !bound(uses, i) {
			held = append(held, pagesOf(offs[i], offs[i]+b.Size, page))
			continue
		}
		for p, u := range uses {
			if u[i] == nil || u[i].hi <= u[i].lo {
				continue
			}
			r := pagesOf(offs[i]+int64(u[i].lo), offs[i]+int64(u[i].hi), page)
			touched[p] = append(touched[p], r)
			if u[i].carried {
				held = append(held, r)
			}
		}
	}
	drops := make([][][2]int64, len(uses))
	for p := range uses {
		keep := slices.Clone(held)
		for q := range uses {
			if q != p {
				keep = append(keep, touched[q]...)
			}
		}
		d := without(merged(touched[p]), merged(keep))
		n := int64(0)
		for _, r := range d {
			n += r[1] - r[0]
		}
		if n >= dropMin {
			drops[p] = d
		}
	}
	return drops
}

// pagesOf is [lo, hi) widened to whole pages.
func pagesOf(lo, hi, page int64) [2]int64 {
	return [2]int64{lo / page * page, alignUp(hi, page)}
}

// merged sorts ranges and joins those that meet or touch.
func merged(rs [][2]int64) [][2]int64 {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int64
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// without is the parts of a (merged) outside every range of b (merged).
func without(a, b [][2]int64) [][2]int64 {
	var out [][2]int64
	for _, r := range a {
		lo := r[0]
		for _, k := range b {
			if k[1] <= lo || k[0] >= r[1] {
				continue
			}
			if k[0] > lo {
				out = append(out, [2]int64{lo, k[0]})
			}
			lo = max(lo, k[1])
		}
		if lo < r[1] {
			out = append(out, [2]int64{lo, r[1]})
		}
	}
	return out
}

// dropBefore runs before pass: it gives back what the pass that ran last
// alone needed, if that was another pass (its arena ranges, attention's
// and the quantized GEMM's scratch), and remembers pass if it has ranges
// to give. Nothing is in flight: every pass ends with a fence (Pool.End).
func (e *Exec) dropBefore(pass int) {
	if p := e.pending; p >= 0 && p != pass {
		e.pending = -1
		e.drop(p)
	}
	if pass < len(e.drops) && e.drops[pass] != nil {
		e.pending = pass
	}
}

// drop gives back pass's ranges and the many-row passes' scratch.
func (e *Exec) drop(pass int) {
	if pass >= len(e.drops) || e.drops[pass] == nil {
		return // (a test's executor that keeps its pages)
	}
	for _, r := range e.drops[pass] {
		e.dropped += e.arena.drop(r[0], r[1])
	}
	e.dropped += e.attn.drop(0, int64(len(e.attn.b)))
	e.dropped += e.mm.qact.drop(0, int64(len(e.mm.qact.b)))
	e.nDrops++
}
