package llm

import (
	"github.com/harkapp/hark/engine/plan"
)

// maxChain bounds the tokens decoded by one chained call: a GPU encodes
// them in command buffers of its chain length; beyond that the host would
// only hold more step records.
const maxChain = 256

// chain feeds the pending token (tokens[pos], chosen by selectNext) and
// decodes up to n more on the backend without host round trips: decode at
// pos+j, then argmax (or the Sample pass, with step step+j) writing
// tokens[pos+j+1], which the next decode's embedding reads. take sees each
// selected token and its slot in order and returns false to stop; tokens selected after
// that are discarded (their KV entries lie past the new position and are
// overwritten by later feeds). It returns how many tokens take accepted.
func (m *Model) chain(ch plan.Chainer, n int, sample bool, step uint64, take func(tok int32, slot int) bool) (int, error) {
	n = min(n, m.lay.ctx-m.pos, maxChain)
	if n < 1 {
		return 0, m.room(1)
	}
	base := m.pos
	passes := make([]int, 0, 2*n)
	vars := make([]plan.Vars, 0, 2*n)
	for j := range n {
		p := int64(base + j)
		passes = append(passes, PassDecode)
		vars = append(vars, plan.Vars{plan.VarPos: p, plan.VarNTok: 1, plan.VarKVLen: p + 1})
		sel := plan.Vars{plan.VarPos: p + 1, plan.VarKVLen: p + 1, plan.VarStep: int64(step) + int64(j)}
		pass := PassArgmax
		if sample {
			pass = PassSample
		}
		passes = append(passes, pass)
		vars = append(vars, sel)
	}
	taken, seen := 0, 0
	var readErr error
	done := func(completed int) bool {
		k := completed / 2 // selections finished
		if k <= seen {
			return true
		}
		ids := m.idStaging(k - seen)
		if readErr = plan.ReadI32(m.exec, m.lay.tokens, base+1+seen, ids); readErr != nil {
			return false
		}
		for _, id := range ids {
			seen++
			taken++
			if !take(id, base+seen) {
				return false
			}
		}
		return true
	}
	completed, err := ch.RunPasses(passes, vars, 0, done)
	if err == nil {
		err = readErr
	}
	// taken selections mean taken decodes: tokens[base:base+taken] are now
	// in the context.
	if taken > 0 {
		ids := m.idStaging(taken)
		if rerr := plan.ReadI32(m.exec, m.lay.tokens, base, ids); rerr != nil && err == nil {
			err = rerr
		}
		m.toks = append(m.toks, ids...)
		m.pos += taken
	}
	// Steps past the last accepted token overwrote the logits; decode the
	// last token in the context again so Logits and the next selection see
	// its logits, as after a one-step decode.
	if err == nil && taken > 0 && completed > 2*taken {
		m.pos--
		m.toks = m.toks[:m.pos]
		err = m.run(1)
	}
	return taken, err
}
