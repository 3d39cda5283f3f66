package cpu

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// beamCopy (plan.BeamCopyArgs) reorders a cache's sequences in place. It
// moves a few rows per beam-search step, bandwidth-bound and small, so it
// runs on the calling goroutine. Position by position, the rows of
// sources that are themselves overwritten are saved first, so every read
// sees the cache as it was before the dispatch.
func (e *Exec) beamCopy(d *plan.Dispatch) error {
	a := plan.DecodeBeamCopy(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	if a.Seqs == 0 || a.N == 0 || a.Width == 0 {
		return nil
	}
	src, err := typedSlice[int32](e, d, plan.SlotBeamCopySrc, a.Seqs)
	if err != nil {
		return err
	}
	if src == nil {
		return e.req(plan.SlotBeamCopySrc, false)
	}
	es := 4
	if d.Type == ggml.F16 || d.Type == ggml.BF16 {
		es = 2
	}
	last := satAdd(satAdd(satMul(a.Seqs-1, a.SeqStride), satMul(a.Pos0+a.N-1, a.PosStride)), a.Width)
	cache, err := e.bytes(d, plan.SlotBeamCopyCache, satMul(last, es))
	if err != nil {
		return err
	}
	if cache == nil {
		return e.req(plan.SlotBeamCopyCache, false)
	}
	// from[s] is s's source, or -1 when s stays as it is
	var from [plan.BeamCopyMaxSeqs]int
	var saved [plan.BeamCopyMaxSeqs]bool // s is read by another and overwritten itself
	moved := false
	for s := range a.Seqs {
		from[s] = -1
		if v := int(src[s]); v >= 0 && v < a.Seqs && v != s {
			from[s], moved = v, true
		}
	}
	if !moved {
		return nil
	}
	for s := range a.Seqs {
		if f := from[s]; f >= 0 && from[f] >= 0 {
			saved[f] = true
		}
	}
	row := a.Width * es
	if len(e.beamRow) < a.Seqs*row {
		e.beamRow = make([]byte, a.Seqs*row)
	}
	at := func(s, p int) []byte {
		o := (s*a.SeqStride + p*a.PosStride) * es
		return cache[o : o+row]
	}
	for p := a.Pos0; p < a.Pos0+a.N; p++ {
		for s := range a.Seqs {
			if saved[s] {
				copy(e.beamRow[s*row:(s+1)*row], at(s, p))
			}
		}
		for s := range a.Seqs {
			f := from[s]
			switch {
			case f < 0:
			case saved[f]:
				copy(at(s, p), e.beamRow[f*row:(f+1)*row])
			default:
				copy(at(s, p), at(f, p))
			}
		}
	}
	return nil
}
