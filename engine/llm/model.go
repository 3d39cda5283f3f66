package llm

import (
	"errors"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

// DefaultContext caps the context when Options.Context is 0: files
// advertise up to 128k positions, whose f16 KV cache would not fit a
// laptop's memory for most models.
const DefaultContext = 4096

// DefaultBatch is the prefill chunk when Options.Batch is 0.
const DefaultBatch = 512

// ErrContextFull is returned (wrapped) when a step would go past the
// context. The model's state is unchanged; the caller decides what to do
// (stop, or Reset and feed a shorter tail of the conversation to slide the
// window).
var ErrContextFull = errors.New("llm: the context is full")

// Options configure Load.
type Options struct {
	// Context is the most positions the KV cache holds: the file's
	// context_length capped by this value (0 = DefaultContext).
	Context int
	// Batch is the most tokens one prefill step feeds (0 = DefaultBatch).
	Batch int
	// F32Cache keeps the KV cache in f32 (exact, twice the memory)
	// instead of f16 (llama.cpp's default).
	F32Cache bool
}

// Model is a loaded decoder-only LLM: its plan, executed by a backend, and
// the position of the single sequence in its KV cache.
type Model struct {
	Arch Arch
	H    HParams
	exec plan.Executable
	lay  *layout
	pos  int
	toks []int32 // host copy of tokens[0:pos]
	mem  plan.Footprint
	rows int // the most tokens one prefill step feeds
	// host staging
	logits []float32
	ids    []int32
}

// Load reads the architecture and hyper-parameters of f, builds the plan
// and loads it on backend. f must stay open while the model is used: the
// weights are read from its memory map.
func Load(backend plan.Backend, f *gguf.File, opt Options) (*Model, error) {
	a, h, err := readModel(f)
	if err != nil {
		return nil, err
	}
	ctx := opt.Context
	if ctx <= 0 {
		ctx = DefaultContext
	}
	ctx = min(ctx, h.NCtx)
	batch := opt.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	batch = min(batch, ctx)
	kvt := ggml.F16
	if opt.F32Cache {
		kvt = ggml.F32
	}
	p, lay, err := buildPlan(a, h, f, ctx, batch, kvt)
	if err != nil {
		return nil, err
	}
	exec, err := backend.Load(p)
	if err != nil {
		return nil, fmt.Errorf("llm: loading the plan on %s: %w", backend.Name(), err)
	}
	return &Model{Arch: a, H: h, exec: exec, lay: lay, mem: p.Footprint(), rows: batch, logits: make([]float32, h.NVocab)}, nil
}

// Footprint is the memory the model's plan declares (its scratch grows
// with Batch, its state with Context).
func (m *Model) Footprint() plan.Footprint { return m.mem }

// Batch is the most tokens one prefill step feeds (Options.Batch, capped
// by the context).
func (m *Model) Batch() int { return m.rows }

// readModel reads f's architecture and hyper-parameters.
func readModel(f *gguf.File) (Arch, HParams, error) {
	a, err := LookupArch(f.Architecture())
	if err != nil {
		return a, HParams{}, err
	}
	h, err := ReadHParams(f, a)
	return a, h, err
}

// Close releases the backend's buffers.
func (m *Model) Close() error { return m.exec.Close() }

// Context is the most positions the model holds.
func (m *Model) Context() int { return m.lay.ctx }

// Pos is the number of tokens in the context (the next token's position).
func (m *Model) Pos() int { return m.pos }

// Tokens are the tokens in the context (the slice is the model's; do not
// modify).
func (m *Model) Tokens() []int32 { return m.toks }

// Reset empties the context. The KV cache is not cleared: positions at or
// past Pos are never read.
func (m *Model) Reset() { m.pos, m.toks = 0, m.toks[:0] }

// idStaging returns n int32s of reusable host memory.
func (m *Model) idStaging(n int) []int32 {
	if cap(m.ids) < n {
		m.ids = make([]int32, n)
	}
	return m.ids[:n]
}

func (m *Model) room(n int) error {
	if m.pos+n > m.lay.ctx {
		return fmt.Errorf("%w: %d tokens at position %d exceed the context of %d", ErrContextFull, n, m.pos, m.lay.ctx)
	}
	return nil
}

// feed writes tokens at the current position and runs them through the
// model, leaving the last token's logits in the plan's logits buffer.
func (m *Model) feed(tokens []int32) error {
	if len(tokens) == 0 {
		return errors.New("llm: no tokens to feed")
	}
	if err := m.room(len(tokens)); err != nil {
		return err
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.H.NVocab {
			return fmt.Errorf("llm: token id %d outside the vocabulary of %d", t, m.H.NVocab)
		}
	}
	if err := plan.WriteI32(m.exec, m.lay.tokens, m.pos, tokens); err != nil {
		return err
	}
	for len(tokens) > 0 {
		n := min(len(tokens), m.lay.batch)
		if err := m.run(n); err != nil {
			return err
		}
		tokens = tokens[n:]
	}
	return nil
}

// run processes the n tokens already in the tokens buffer at pos.
func (m *Model) run(n int) error {
	vars := plan.Vars{plan.VarPos: int64(m.pos), plan.VarNTok: int64(n), plan.VarKVLen: int64(m.pos + n)}
	pass := PassPrefill
	if n == 1 {
		pass = PassDecode
	}
	if err := m.exec.Run(pass, &vars); err != nil {
		return err
	}
	if cap(m.toks) < len(m.toks)+n {
		m.toks = append(make([]int32, 0, max(2*cap(m.toks), len(m.toks)+n, 64)), m.toks...)
	}
	if err := plan.ReadI32(m.exec, m.lay.tokens, m.pos, m.toks[len(m.toks):len(m.toks)+n]); err != nil {
		return err
	}
	m.toks = m.toks[:len(m.toks)+n]
	m.pos += n
	return nil
}

// Prefill feeds tokens (in chunks of the plan's batch) and returns the
// logits after the last one. The slice is reused by the next call.
func (m *Model) Prefill(tokens []int32) ([]float32, error) {
	if err := m.feed(tokens); err != nil {
		return nil, err
	}
	return m.Logits()
}

// Decode feeds one token and returns the logits after it. The slice is
// reused by the next call.
func (m *Model) Decode(token int32) ([]float32, error) {
	return m.Prefill([]int32{token})
}

// Logits reads the logits of the last token fed.
func (m *Model) Logits() ([]float32, error) {
	if m.pos == 0 {
		return nil, errors.New("llm: no token was fed")
	}
	if err := plan.ReadF32(m.exec, m.lay.logits, 0, m.logits); err != nil {
		return nil, err
	}
	return m.logits, nil
}

// selectNext picks the next token on the backend (argmax, or the sampler
// setSampler wrote) into tokens[pos], where stepNext reads it. The token
// is not yet in the context.
func (m *Model) selectNext(sample bool, step uint64) (int32, error) {
	if m.pos == 0 {
		return 0, errors.New("llm: no token was fed")
	}
	if m.pos >= m.lay.ctx+1 {
		return 0, ErrContextFull
	}
	vars := plan.Vars{plan.VarPos: int64(m.pos), plan.VarKVLen: int64(m.pos), plan.VarStep: int64(step)}
	pass := PassArgmax
	if sample {
		pass = PassSample
	}
	if err := m.exec.Run(pass, &vars); err != nil {
		return 0, err
	}
	var id [1]int32
	if err := plan.ReadI32(m.exec, m.lay.tokens, m.pos, id[:]); err != nil {
		return 0, err
	}
	return id[0], nil
}

// setSampler writes s as the Sample pass's step data for a generation
// after the tokens in the context: its settings, and the token counts the
// penalties start from (the prompt window's; the pass counts each drawn
// token).
func (m *Model) setSampler(s Sampler) error {
	w := make([]uint32, plan.SampleSettingsWords)
	st := s.settings()
	st.Encode(w)
	if err := plan.WriteU32(m.exec, m.lay.settings, 0, w); err != nil {
		return err
	}
	win := s.promptWindow(m.pos)
	if win == 0 {
		// the counts are only read with penalties; reset the number of
		// distinct ids so a long session never fills the list
		return plan.WriteI32(m.exec, m.lay.counts, m.H.NVocab, []int32{0})
	}
	n := m.H.NVocab
	c := make([]int32, 2*n+1)
	for _, id := range m.toks[m.pos-win:] {
		plan.CountSampled(c, n, id)
	}
	return plan.WriteI32(m.exec, m.lay.counts, 0, c)
}

// logprobs reads the logprobs record of the token drawn into tokens[slot].
func (m *Model) logprobs(slot int, top int, lp *TokenLogprob) error {
	return readLogprobs(m.exec, m.lay.logprobs, slot, top, lp)
}

// readLogprobs reads record slot of a Sample pass's logprobs buffer.
func readLogprobs(x plan.Executable, buf plan.BufID, slot int, top int, lp *TokenLogprob) error {
	var rec [plan.SampleLogprobWords]float32
	if err := plan.ReadF32(x, buf, slot*plan.SampleLogprobWords, rec[:]); err != nil {
		return err
	}
	lp.Logprob = rec[0]
	lp.Top = nil
	if top > 0 {
		lp.Top = make([]TopLogprob, top)
		for i := range lp.Top {
			lp.Top[i] = TopLogprob{Token: int32(math.Float32bits(rec[1+2*i])), Logprob: rec[2+2*i]}
		}
	}
	return nil
}

// stepNext feeds the token selectNext left at tokens[pos] without a round
// trip of the id through the host.
func (m *Model) stepNext() error {
	if err := m.room(1); err != nil {
		return err
	}
	return m.run(1)
}
