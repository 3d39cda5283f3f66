package cpu

import "github.com/harkapp/hark/engine/plan"

// argmax (plan.ArgmaxArgs). Rows are few (one per sequence), so each runs
// on the pool by blocks where it is long (a Whisper step's logits), else
// on the calling goroutine.
func (e *Exec) argmax(d *plan.Dispatch) error {
	a := plan.DecodeArgmax(d)
	n, m, ldx := a.N, a.M, a.Ldx
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	if m == 0 {
		return nil
	}
	x, err := e.f32(d, 0, extent(m, ldx, n))
	if err != nil {
		return err
	}
	out, err := typedSlice[int32](e, d, 1, m)
	if err != nil {
		return err
	}
	if memo, ok := e.memoFor(x[:n]); ok && m == 1 && !overlapF32I32(x[:n], out) {
		out[0] = int32(memo.arg) // the filter's, of this row
		return nil
	}
	for t := range out {
		out[t] = int32(e.argmaxRow(x[t*ldx : t*ldx+n]))
	}
	return nil
}
