package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// chainSteps is RunPasses' default batch: 128 steps, 64 tokens of an LLM
// decode chain (decode, then argmax or sample), recorded as one graph and
// replayed with one launch. Generating n tokens then takes the prompt's
// launch, the first token's and ceil((n-1)/64) more: 4 for 128 tokens,
// 1/32 per token. A stop (EOS, a stop string) is seen at the end of the
// batch, so up to 63 tokens past it are computed and dropped.
const chainSteps = 128

// RunPasses implements plan.Chainer: step i replays passes[i] with
// vars[i], chunk steps (at most stepRows; chunk <= 0: chainSteps) per
// batch, each batch one graph replay once its shape repeats (graph.go)
// and waited for before done sees it. An LLM decode chain alternates the
// decode pass (its embedding reads tokens[VarPos]) and the argmax or
// sample pass (it writes tokens[VarKVLen]), so the GPU feeds itself and
// the host reads back only token ids, in done. A batch that fails to
// prepare (a patch out of range, a binding past its buffer) is not
// issued; earlier batches completed and count.
func (e *Exec) RunPasses(passes []int, vars []plan.Vars, chunk int, done func(completed int) bool) (int, error) {
	if len(passes) != len(vars) {
		return 0, fmt.Errorf("cuda: plan %s: %d passes for %d step variables", e.name, len(passes), len(vars))
	}
	if chunk <= 0 {
		chunk = chainSteps
	}
	return e.runSteps(0, passes, vars, min(chunk, stepRows), nil, done)
}

// RunPassesIO implements plan.IOChainer: RunPasses with io's write
// queued before the first batch's work and io's reads behind each batch's,
// so a chained decode that hands over its input and checks its state
// every batch (Whisper's greedy window) waits once a batch and never
// besides. io.Halt is honoured: every launch of the steps from its From
// on gets the halt word (Params.halt) and returns at once once the word
// says stop, so the steps a batch runs past a decode's end cost a launch
// each (setHalt).
func (e *Exec) RunPassesIO(passes []int, vars []plan.Vars, chunk int, io *plan.ChainIO, done func(completed int) bool) (int, error) {
	if len(passes) != len(vars) {
		return 0, fmt.Errorf("cuda: plan %s: %d passes for %d step variables", e.name, len(passes), len(vars))
	}
	if chunk <= 0 {
		chunk = chainSteps
	}
	e.mu.Lock()
	err := e.hostSpan(io.In, io.InOff, len(io.Src), "write")
	if err == nil {
		err = e.hostSpan(io.Out, io.OutOff, len(io.Dst), "read")
	}
	for i := 0; err == nil && i < len(io.Also); i++ {
		err = e.hostSpan(io.Also[i].Buf, io.Also[i].Off, len(io.Also[i].Dst), "read")
	}
	if h := io.Halt; err == nil && h != nil {
		if err = e.hostSpan(h.Buf, h.Off, 4, "halt word"); err == nil && h.Off%4 != 0 {
			err = fmt.Errorf("cuda: plan %s: halt word at byte %d is not aligned", e.name, h.Off)
		}
	}
	e.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return e.runSteps(0, passes, vars, min(chunk, stepRows), io, done)
}

// unchained is an Exec without RunPasses (Options.NoChain): model code
// then runs one step per call, as with part 1 of the backend.
type unchained struct{ e *Exec }

func (u unchained) Run(pass int, vars *plan.Vars) error             { return u.e.Run(pass, vars) }
func (u unchained) RunSeq(pass int, steps []plan.Vars) error        { return u.e.RunSeq(pass, steps) }
func (u unchained) Write(buf plan.BufID, off int64, b []byte) error { return u.e.Write(buf, off, b) }
func (u unchained) Read(buf plan.BufID, off int64, b []byte) error  { return u.e.Read(buf, off, b) }
func (u unchained) Close() error                                    { return u.e.Close() }

// setHalt gives batch b of the steps from lo io's halt word, if any, for
// its steps from the halt's From on; the word's address, running value
// and first step of b are part of b's key (a graph bakes them into its
// kernel nodes' parameters).
func (e *Exec) setHalt(b *batch, io *plan.ChainIO, lo int, keyed bool) {
	if io == nil || io.Halt == nil {
		return
	}
	h := io.Halt
	b.halt, b.running, b.haltFrom = e.ptrs[h.Buf]+uint64(h.Off), h.Running, int32(max(h.From-lo, 0))
	if keyed {
		b.key = binary.LittleEndian.AppendUint64(b.key, b.halt)
		b.key = binary.LittleEndian.AppendUint32(b.key, uint32(b.running))
		b.key = binary.LittleEndian.AppendUint32(b.key, uint32(b.haltFrom))
	}
}
