package cpu

import "github.com/harkapp/hark/engine/plan"

// fences marks the dispatches of a pass that must wait for every job still
// in flight before they start: those that read what an unfenced dispatch
// since the last fence writes, or write what one reads or writes
// (plan.Hazards). The others (a layer's q, k and v products from the same
// input, its gate and up products) start while the helpers still finish
// the ones before, so a decode step pays a barrier only between dependent
// dispatches, as ggml's graph compute does. Computed once at load from
// the bindings' byte ranges; a dispatch with patches may move anywhere in
// its buffers, so each of its bindings counts as the whole buffer.
// Buffers that share the scratch arena are compared by their bytes in it
// (places, by buffer id; arena.go).
func fences(ops []plan.Dispatch, places []arenaPlace) []bool {
	fence := make([]bool, len(ops))
	var hz plan.Hazards
	var acc []plan.Span
	arena := plan.BufID(len(places))
	for i := range ops {
		acc = spans(&ops[i], acc[:0])
		for j, s := range acc {
			if int(s.Buf) < len(places) {
				acc[j] = places[s.Buf].place(s, arena)
			}
		}
		fence[i] = hz.Add(acc) || i == 0
	}
	return fence
}

// spans is the dispatch's reads and writes, each a whole buffer when the
// dispatch has patches.
func spans(d *plan.Dispatch, dst []plan.Span) []plan.Span {
	n := len(dst)
	all := d.Spans(nil, dst)
	dst = all[:n]
	for _, s := range all[n:] { // filtered in place: writes never pass reads
		if !s.Read && !s.Write {
			continue
		}
		if d.NPatch > 0 {
			s.Lo, s.Hi = 0, plan.ToEnd
		}
		dst = append(dst, s)
	}
	return dst
}
