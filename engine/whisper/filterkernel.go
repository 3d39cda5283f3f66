package whisper

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// table is the filter's constant part as plan.WhisperFilter reads it:
// row 0 (added at every position) holds the logit bias, −Inf for the
// suppressed tokens; row 1 (added at the first position) −Inf for the
// suppress-blank tokens. Adding 0 leaves a logit's bits as they are, so
// the kernel's result is the host filter's.
func (f *logitFilter) table(nv int) ([]float32, error) {
	t := make([]float32, 2*nv)
	for tok, b := range f.bias {
		if tok >= 0 && int(tok) < nv {
			t[tok] = b
		}
	}
	for _, tok := range f.suppress {
		if tok < 0 || int(tok) >= nv {
			return nil, fmt.Errorf("whisper: suppressed token %d outside the vocabulary (%d)", tok, nv)
		}
		t[tok] = negInf
	}
	for _, tok := range f.suppressBlank {
		if tok < 0 || int(tok) >= nv {
			return nil, fmt.Errorf("whisper: suppress-blank token %d outside the vocabulary (%d)", tok, nv)
		}
		t[nv+int(tok)] = negInf
	}
	return t, nil
}

// filterArgs is the WhisperFilter dispatch of f over m rows of logits
// (row stride nv) whose sampled tokens are rows of hist (stride ldh);
// with or without the timestamp rules. Count is patched from VarUser0 and
// the initial-timestamp bound from VarUser1 (see filterVars), as they
// change per step and per window.
func filterDispatch(sp Specials, timestamps bool, nv, m int, logits, table, hist plan.Binding, ldh int) plan.Dispatch {
	a := plan.WhisperFilterArgs{X: logits, Table: table, Hist: hist, N: nv, M: m, Ldx: nv, Ldh: ldh,
		TsBegin: int(sp.TimestampBegin), EOT: int(sp.EOT), NoTs: int(sp.NoTimestamps)}
	if timestamps {
		a.Flags = plan.FlagTimestamps
	}
	d := a.Dispatch()
	d.AddPatch(plan.PatchWhisperFilterCount, plan.VarUser0, 1, 0)
	d.AddPatch(plan.PatchWhisperFilterMaxInitial, plan.VarUser1, 1, 0)
	return d
}

// setFilterVars sets the step variables filterDispatch reads: count
// tokens sampled so far under filter f.
func (f *logitFilter) setFilterVars(v *plan.Vars, nv, count int) {
	v[plan.VarUser0] = int64(count)
	v[plan.VarUser1] = int64(nv) // no bound
	if f.maxInitialTsIx >= 0 && f.maxInitialTsIx < nv {
		v[plan.VarUser1] = int64(f.maxInitialTsIx)
	}
}
