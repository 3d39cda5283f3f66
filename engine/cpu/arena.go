package cpu

import (
	"cmp"
	"os"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// The Scratch buffers of a plan live in one allocation, the arena, where
// two of them share bytes when no pass needs both at once. A Scratch
// buffer's contents mean nothing outside the step that writes them
// (engine/README.md, Buffers and their lifetimes), so a pass needs a
// buffer from a dispatch that binds it until the last one before a
// dispatch that overwrites what the pass uses of it, and only the bytes
// the pass touches (decode's one row of buffers sized for a prefill
// batch, a chunked run's rows: chunk.go). An LLM prefill's QKV rows and
// its FFN's gate|up rows, or the sampler's scratch and every activation,
// then take the same memory: the SmolLM2 plan's 12.2 MB of scratch need
// 8.7 MB by live ranges alone, 2.3 MB with its layer blocks chunked
// (Options.ChunkRows)
// (issue #37). The arena is an anonymous mapping (packAlloc) as long as
// the buffers laid end to end would be; the pages no pass touches are
// never faulted in. The fences compare bytes in the arena (arenaPlace),
// so a dispatch that writes bytes a job still in flight reads under
// another name waits for it.
//
// A dispatch with patches is taken to touch the whole of each buffer it
// binds, as the fences take it, unless its patches only set parameters
// that its spans do not follow (patchesKeepSpans); one without patches
// touches what its spans say.

// arenaAlign keeps every buffer in the arena on a cache line, as
// alignedBytes does for a buffer of its own.
const arenaAlign = 64

// arenaPlace is where a buffer's bytes lie for the fences: in the arena
// (in, at off, size bytes) or in a buffer of its own.
type arenaPlace struct {
	in        bool
	off, size uint64
}

// place maps a span into the arena where its buffer lies there, so two
// names of the same bytes conflict (arena is the id the fences give the
// arena: one past the plan's buffers).
func (pl arenaPlace) place(s plan.Span, arena plan.BufID) plan.Span {
	if !pl.in {
		return s
	}
	s.Buf = arena
	s.Lo, s.Hi = pl.off+min(s.Lo, pl.size), pl.off+min(s.Hi, pl.size)
	return s
}

// use is what one pass needs of a buffer: the dispatch ranges [first,
// last] in which it holds bytes a later dispatch of the range reads, the
// bytes [lo, hi) the pass touches, and whether its first dispatch that
// binds the buffer reads it (carried: bytes from before the pass).
type use struct {
	ranges  [][2]int
	lo, hi  uint64
	first   int
	carried bool
}

// scratchLayout lays out the Scratch buffers of a plan whose passes
// dispatch ops: their offsets in the arena (-1 for other kinds), the
// bytes the arena spans (every buffer whole: the bytes no pass touches
// are never faulted in), the bytes the passes touch, and each pass's
// chunked runs, and the arena's ranges each pass gives back after it
// (arena_release.go).
//
// chunk is the rows of a chunked run's chunk (0: none; chunk.go), and
// rowExact says whether a dispatch's rows come out the same whatever the
// rows beside them (chunk.go: a product on the quantized GEMM, not on a
// BLAS whose rounding may follow the shape).
func scratchLayout(bufs []plan.Buffer, ops [][]plan.Dispatch, rowExact func(*plan.Dispatch) bool, chunk int64) (offs []int64, span, touched int64, runs [][]chunkRun, drops [][][2]int64) {
	sizes := bufSizes(bufs)
	whole := func(p, i int, dst []plan.Span) []plan.Span { return scratchSpans(&ops[p][i], bufs, sizes, dst) }
	uses := passUses(bufs, ops, whole)
	runs = make([][]chunkRun, len(ops))
	in := make([][]*chunkRun, len(ops)) // the run of each dispatch
	for p := range ops {
		runs[p] = chunkRuns(ops[p], uses[p], rowExact, chunk)
		in[p] = make([]*chunkRun, len(ops[p]))
		for r := range runs[p] {
			for k := runs[p][r].first; k <= runs[p][r].last; k++ {
				in[p][k] = &runs[p][r]
			}
		}
	}
	uses = passUses(bufs, ops, func(p, i int, dst []plan.Span) []plan.Span {
		if r := in[p][i]; r != nil {
			return r.layoutSpans(i, bufs, sizes, dst)
		}
		return whole(p, i, dst)
	})
	// A run's chunks repeat its dispatches, so the other buffers it binds
	// are needed from its first dispatch to its last.
	for p := range runs {
		for _, r := range runs[p] {
			for b, u := range uses[p] {
				if u == nil || r.inner[plan.BufID(b)] {
					continue
				}
				for k, x := range u.ranges {
					if x[0] <= r.last && r.first <= x[1] {
						u.ranges[k] = [2]int{min(x[0], r.first), max(x[1], r.last)}
					}
				}
			}
		}
	}
	offs, span, touched = arenaLayout(bufs, uses)
	return offs, span, touched, runs, arenaDrops(bufs, uses, offs, int64(os.Getpagesize()))
}

// arenaLayout places the Scratch buffers of bufs: the offset of each
// (-1 for other kinds), the bytes the arena spans and those the passes
// touch. Each buffer in turn goes to the lowest offset where it meets
// none of those placed before; of three orders (largest first, largest
// extent first, most often met first) the one touching least wins.
func arenaLayout(bufs []plan.Buffer, uses [][]*use) (offs []int64, span, touched int64) {
	var ids []int
	for i, b := range bufs {
		if b.Kind == plan.Scratch {
			ids = append(ids, i)
		}
	}
	extent := func(id int) int64 { return extentOf(bufs, uses, id) }
	degree := func(id int) int {
		n := 0
		for _, o := range ids {
			if o != id && meet(uses, bufs, id, 0, o, 0) {
				n++
			}
		}
		return n
	}
	live := func(id int) int {
		n := 0
		for _, u := range uses {
			if u[id] != nil {
				for _, r := range u[id].ranges {
					n += r[1] - r[0] + 1
				}
			}
		}
		return n
	}
	orders := []func(a, b int) int{
		func(a, b int) int { return cmp.Compare(bufs[b].Size, bufs[a].Size) },
		func(a, b int) int { return cmp.Compare(extent(b), extent(a)) },
		func(a, b int) int {
			return cmp.Or(cmp.Compare(degree(b), degree(a)), cmp.Compare(extent(b), extent(a)))
		},
		func(a, b int) int { return cmp.Or(cmp.Compare(live(b), live(a)), cmp.Compare(extent(b), extent(a))) },
	}
	var tries [][]int
	for _, by := range orders {
		order := slices.Clone(ids)
		slices.SortStableFunc(order, by)
		tries = append(tries, order)
	}
	for n, first := range tries[1] { // each first, then by extent
		order := append([]int{first}, tries[1][:n]...)
		tries = append(tries, append(order, tries[1][n+1:]...))
	}
	for n, order := range tries {
		o, sp, t := placeInOrder(bufs, uses, order)
		if n == 0 || t < touched {
			offs, span, touched = o, sp, t
		}
	}
	return offs, span, touched
}

// extentOf is the bytes from a buffer's start that some pass touches (all
// of a buffer no pass binds: the host's).
func extentOf(bufs []plan.Buffer, uses [][]*use, id int) int64 {
	if !bound(uses, id) {
		return bufs[id].Size
	}
	hi := int64(0)
	for _, u := range uses {
		if u[id] != nil {
			hi = max(hi, int64(u[id].hi))
		}
	}
	return hi
}

// placeInOrder places the buffers ids in turn, each at the lowest offset
// where it meets none placed before.
func placeInOrder(bufs []plan.Buffer, uses [][]*use, ids []int) (offs []int64, span, touched int64) {
	offs = make([]int64, len(bufs))
	for i := range offs {
		offs[i] = -1
	}
	var placed []int
	for _, id := range ids {
		// candidates: 0 and just past each placed buffer's bytes
		cands := []int64{0}
		for _, o := range placed {
			cands = append(cands, alignUp(offs[o]+bufs[o].Size, arenaAlign))
			for _, u := range uses {
				if u[o] != nil && u[id] != nil {
					cands = append(cands, alignUp(offs[o]+int64(u[o].hi)-int64(u[id].lo), arenaAlign))
				}
			}
		}
		slices.Sort(cands)
		for _, at := range cands {
			if at < 0 || slices.ContainsFunc(placed, func(o int) bool { return meet(uses, bufs, id, at, o, offs[o]) }) {
				continue
			}
			offs[id] = at
			break
		}
		span = max(span, offs[id]+bufs[id].Size)
		touched = max(touched, offs[id]+extentOf(bufs, uses, id))
		placed = append(placed, id)
	}
	return offs, span, touched
}

// bound reports whether some pass binds buffer id.
func bound(uses [][]*use, id int) bool {
	return slices.ContainsFunc(uses, func(u []*use) bool { return u[id] != nil })
}

func alignUp(v, a int64) int64 { return (v + a - 1) / a * a }

// passUses finds, per pass, each Scratch buffer's use (nil where the pass
// does not bind it). A range ends before a dispatch that writes, densely
// and without reading, all the bytes the pass touches of the buffer (the
// LLM's norm writing h, a fused QKV product its row, the gate|up
// product): within a pass a dispatch reads only what the pass wrote
// before it, so the bytes before that write are never read again.
// spansOf gives the Scratch spans of dispatch i of pass p for the layout
// (scratchSpans, or a chunked run's layoutSpans).
func passUses(bufs []plan.Buffer, ops [][]plan.Dispatch, spansOf func(p, i int, dst []plan.Span) []plan.Span) [][]*use {
	uses := make([][]*use, len(ops))
	var sp []plan.Span
	for p := range ops {
		u := make([]*use, len(bufs))
		spans := make([][]plan.Span, len(ops[p]))
		for i := range ops[p] {
			sp = spansOf(p, i, sp[:0])
			spans[i] = slices.Clone(sp)
			for _, s := range sp {
				if u[s.Buf] == nil {
					u[s.Buf] = &use{lo: s.Lo, hi: s.Hi, first: i}
				}
				if u[s.Buf].first == i && s.Read {
					u[s.Buf].carried = true
				}
				u[s.Buf].lo, u[s.Buf].hi = min(u[s.Buf].lo, s.Lo), max(u[s.Buf].hi, s.Hi)
			}
		}
		for i, sp := range spans {
			for _, s := range sp {
				r := &u[s.Buf].ranges
				n := len(*r)
				switch {
				case n > 0 && (*r)[n-1][1] == i: // another binding of the same dispatch
				case n == 0 || overwrites(sp, s.Buf, u[s.Buf].lo, u[s.Buf].hi):
					*r = append(*r, [2]int{i, i})
				default:
					(*r)[n-1][1] = i
				}
			}
		}
		uses[p] = u
	}
	return uses
}

// bufSizes is each buffer's size, for Spans.
func bufSizes(bufs []plan.Buffer) []uint64 {
	sizes := make([]uint64, len(bufs))
	for i, b := range bufs {
		sizes[i] = uint64(max(b.Size, 0))
	}
	return sizes
}

// scratchSpans appends d's spans on Scratch buffers. A dispatch with
// patches counts as touching the whole of each buffer it binds, unless
// its patches only set parameters its Scratch spans do not follow
// (decode's attention: the keys and the position, not its one row) and
// offsets of bindings outside the Scratch buffers (decode's embedding:
// the token's place in the IO buffer, not its one row of x).
func scratchSpans(d *plan.Dispatch, bufs []plan.Buffer, sizes []uint64, dst []plan.Span) []plan.Span {
	n := len(dst)
	all := d.Spans(sizes, dst)
	dst = all[:n]
	whole := d.NPatch > 0 && !patchesKeepSpans(d, bufs, sizes, all[n:])
	for _, s := range all[n:] {
		if int(s.Buf) >= len(bufs) || bufs[s.Buf].Kind != plan.Scratch || !(s.Read || s.Write) {
			continue
		}
		if whole {
			s.Lo, s.Hi, s.Touched = 0, sizes[s.Buf], sizes[s.Buf]
		}
		// within the buffer: one past it fails at run, whatever its bytes
		s.Lo, s.Hi = min(s.Lo, sizes[s.Buf]), min(s.Hi, sizes[s.Buf])
		dst = append(dst, s)
	}
	return dst
}

// patchesKeepSpans reports whether d's patches set only parameters and
// offsets of bindings outside the Scratch buffers (a binding's span moves
// with its own offset alone), and its Scratch spans (sp, as planned) stay
// the same with those parameters at 0, 1, twice as planned plus one and
// 2^20.
func patchesKeepSpans(d *plan.Dispatch, bufs []plan.Buffer, sizes []uint64, sp []plan.Span) bool {
	for _, p := range d.Patch[:d.NPatch] {
		if p.Target.IsParam() {
			continue
		}
		j := int(p.Target - plan.PatchOffset0)
		if j >= int(d.NBind) || d.Bind[j].Buf == plan.NoBuf || int(d.Bind[j].Buf) >= len(bufs) || bufs[d.Bind[j].Buf].Kind == plan.Scratch {
			return false
		}
	}
	var probe []plan.Span
	for k := range 4 {
		r := *d
		for _, p := range d.Patch[:d.NPatch] {
			if !p.Target.IsParam() {
				continue
			}
			v := [4]uint32{0, 1, 2*d.P[p.Target] + 1, 1 << 20}[k]
			r.P[p.Target] = v
		}
		probe = r.Spans(sizes, probe[:0])
		if len(probe) != len(sp) {
			return false
		}
		for i, s := range probe {
			if int(s.Buf) < len(bufs) && bufs[s.Buf].Kind == plan.Scratch && s != sp[i] {
				return false
			}
		}
	}
	return true
}

// overwrites reports whether a dispatch's spans write every byte of
// [lo, hi) of buffer b, densely, and read none of b.
func overwrites(sp []plan.Span, b plan.BufID, lo, hi uint64) bool {
	var w []plan.Span
	for _, s := range sp {
		if s.Buf != b {
			continue
		}
		if s.Read || !s.Write || s.Touched != s.Hi-s.Lo {
			return false
		}
		w = append(w, s)
	}
	slices.SortFunc(w, func(x, y plan.Span) int { return cmp.Compare(x.Lo, y.Lo) })
	at := lo
	for _, s := range w {
		if s.Lo > at {
			return false
		}
		at = max(at, s.Hi)
	}
	return at >= hi
}

// meet reports whether buffer a at offset offA and buffer b at offB would
// share bytes that one pass needs of both at once. A buffer no pass binds
// is the host's alone: all of it is needed always.
func meet(uses [][]*use, bufs []plan.Buffer, a int, offA int64, b int, offB int64) bool {
	if !bound(uses, a) || !bound(uses, b) {
		return offA < offB+bufs[b].Size && offB < offA+bufs[a].Size
	}
	for _, u := range uses {
		ua, ub := u[a], u[b]
		if ua == nil || ub == nil || offA+int64(ua.hi) <= offB+int64(ub.lo) || offB+int64(ub.hi) <= offA+int64(ua.lo) {
			continue
		}
		for _, x := range ua.ranges {
			for _, y := range ub.ranges {
				if x[0] <= y[1] && y[0] <= x[1] {
					return true
				}
			}
		}
	}
	return false
}
