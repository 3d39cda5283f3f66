package whisper

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/plan"
)

// Model is a loaded Whisper model: its plan, executed by a backend, plus
// the host-side buffers decoding reuses.
type Model struct {
	H       HParams
	exec    plan.Executable
	lay     *layout
	logits  []float32 // host copy of the last logits read
	vars    plan.Vars
	beamSrc []int32   // the source of each beam, written for PassBeamCopy
	table   []float32 // the filter table the backend holds (setFilter), nil when unknown
	chain   chainBufs // a chained window's steps and read-back (chain.go)
	beams   devBeams  // a beam search's steps and read-back (devbeams.go)
	// hostSelect filters logits (and chooses greedy tokens) on the host
	// instead of in PassSelect and PassBeamTop: the reference for
	// tests.
	hostSelect bool
}

// Load builds the plan for h and w and loads it on backend.
func Load(backend plan.Backend, h HParams, w Weights, opt Options) (*Model, error) {
	p, lay, err := buildPlan(h, w, opt)
	if err != nil {
		return nil, err
	}
	exec, err := backend.Load(p)
	if err != nil {
		return nil, fmt.Errorf("whisper: loading the plan on %s: %w", backend.Name(), err)
	}
	return &Model{H: h, exec: exec, lay: lay, logits: make([]float32, opt.beamsOrOne()*h.NVocab),
		beamSrc: make([]int32, opt.beamsOrOne())}, nil
}

func (o Options) beamsOrOne() int { return max(o.Beams, 1) }

// Close releases the backend's buffers.
func (m *Model) Close() error { return m.exec.Close() }

// MaxTokens is the most tokens Prompt accepts at once.
func (m *Model) MaxTokens() int { return m.lay.maxTokens }

func (m *Model) writeF32(id plan.BufID, off int, v []float32) error {
	return plan.WriteF32(m.exec, id, off, v)
}

func (m *Model) readF32(id plan.BufID, off int, dst []float32) error {
	return plan.ReadF32(m.exec, id, off, dst)
}

func (m *Model) writeTokens(tokens []int32) error {
	return plan.WriteI32(m.exec, m.lay.tokens, 0, tokens)
}

// Encode runs the encoder on one window's log-mel spectrogram, laid out
// [n_mels][n_frames], and prepares the cross-attention keys and values the
// decoder reads until the next Encode.
func (m *Model) Encode(mel []float32) error {
	return m.encode(context.Background(), mel)
}

// encode is Encode, stopped between the pass's dispatches once ctx is done
// where the backend can (plan.Canceler: the CPU's), so that a stream step
// abandoned at release does not hold the model for the rest of its
// encoder pass, the bulk of a step's time.
func (m *Model) encode(ctx context.Context, mel []float32) error {
	if len(mel) != m.H.NMels*m.H.NFrames() {
		return fmt.Errorf("whisper: mel has %d values, want %d×%d", len(mel), m.H.NMels, m.H.NFrames())
	}
	if err := m.writeF32(m.lay.mel, 0, mel); err != nil {
		return err
	}
	m.vars = plan.Vars{}
	if c, ok := m.exec.(plan.Canceler); ok && ctx.Done() != nil {
		return c.RunCtx(ctx, PassEncode, &m.vars)
	}
	return m.exec.Run(PassEncode, &m.vars)
}

// EncoderOutput copies the last window's encoder output ([n_audio_ctx][n_audio_state]).
func (m *Model) EncoderOutput(dst []float32) error {
	if len(dst) != m.H.NAudioCtx*m.H.NAudioState {
		return fmt.Errorf("whisper: encoder output has %d values, got room for %d", m.H.NAudioCtx*m.H.NAudioState, len(dst))
	}
	return m.readF32(m.lay.encOut, 0, dst)
}

// Prompt feeds tokens at positions pos, pos+1, ... of the single sequence
// (earlier positions stay in the KV cache) and returns the logits after the
// last one. The slice is reused by the next call.
func (m *Model) Prompt(tokens []int32, pos int) ([]float32, error) {
	if err := m.feed(tokens, pos); err != nil {
		return nil, err
	}
	out := m.logits[:m.H.NVocab]
	return out, m.readF32(m.lay.logits, 0, out)
}

// feed is Prompt leaving the logits on the backend (for PassSelect).
func (m *Model) feed(tokens []int32, pos int) error {
	n := len(tokens)
	if n == 0 || n > m.lay.maxTokens || pos < 0 || pos+n > m.H.NTextCtx {
		return fmt.Errorf("whisper: cannot feed %d tokens at position %d (at most %d, context %d)", n, pos, m.lay.maxTokens, m.H.NTextCtx)
	}
	if err := m.writeTokens(tokens); err != nil {
		return err
	}
	m.vars = plan.Vars{plan.VarPos: int64(pos), plan.VarNTok: int64(n), plan.VarKVLen: int64(pos + n)}
	pass := PassPrompt
	if n == 1 {
		pass = PassStep
	}
	return m.exec.Run(pass, &m.vars)
}

// Align feeds tokens from position 0 (for the window last encoded) and
// returns every row's logits ([n][n_vocab]) and, per decoder layer, the
// cross-attention weights [head][n][n_audio_ctx]: what word timing's
// kernels read on the backend (AlignWords), for tests.
func (m *Model) Align(tokens []int32) (logits []float32, weights [][]float32, err error) {
	h := m.H
	n := len(tokens)
	if n == 0 || n > alignRows(h) {
		return nil, nil, fmt.Errorf("whisper: cannot align %d tokens (at most %d)", n, alignRows(h))
	}
	if err := m.writeTokens(tokens); err != nil {
		return nil, nil, err
	}
	m.vars = plan.Vars{plan.VarPos: 0, plan.VarNTok: int64(n), plan.VarKVLen: int64(n)}
	if err := m.exec.Run(PassAlign, &m.vars); err != nil {
		return nil, nil, err
	}
	logits = make([]float32, n*h.NVocab)
	if err := m.readF32(m.lay.alignLog, 0, logits); err != nil {
		return nil, nil, err
	}
	weights = make([][]float32, h.NTextLayer)
	for l := range weights {
		weights[l] = make([]float32, h.NTextHead*n*h.NAudioCtx)
		if err := m.readF32(m.lay.alignment, l*h.NTextHead*alignRows(h)*h.NAudioCtx, weights[l]); err != nil {
			return nil, nil, err
		}
	}
	return logits, weights, nil
}

// AlignWords runs the forced pass on tokens and word timing's kernels
// after it (PassAlignWords) as one chain with one wait: the tokens written
// with it, the path and log-probabilities read behind it. jumps[r] is the
// first of cols audio frames on the path at row first+r (the rows from
// <|notimestamps|> to the last text token); logprobs[t] is row t's
// log-probability of tokens[t+1] among the text tokens. Word timestamps
// (TranscribeOptions.WordTimestamps) come from it.
func (m *Model) AlignWords(tokens []int32, first, cols int) (jumps []int32, logprobs []float32, err error) {
	n, ar := len(tokens), alignRows(m.H)
	if n > ar || first+2 > n || cols <= 0 {
		return nil, nil, fmt.Errorf("whisper: cannot align %d tokens from row %d over %d frames (at most %d tokens)", n, first, cols, ar)
	}
	src := make([]byte, 0, 4*n)
	for _, t := range tokens {
		src = binary.LittleEndian.AppendUint32(src, uint32(t))
	}
	dst := make([]byte, 8*ar)
	v := plan.Vars{plan.VarPos: 0, plan.VarNTok: int64(n), plan.VarKVLen: int64(n), plan.VarUser0: int64(cols), plan.VarUser1: int64(first)}
	m.vars = v
	io := plan.ChainIO{In: m.lay.tokens, Src: src, Out: m.lay.alignOut, Dst: dst}
	if _, err := plan.RunChainIO(m.exec, []int{PassAlign, PassAlignWords}, []plan.Vars{v, v}, 2, &io, func(int) bool { return true }); err != nil {
		return nil, nil, err
	}
	jumps = make([]int32, n-1-first)
	for i := range jumps {
		jumps[i] = int32(binary.LittleEndian.Uint32(dst[4*i:]))
	}
	logprobs = make([]float32, n-1)
	for i := range logprobs {
		logprobs[i] = math.Float32frombits(binary.LittleEndian.Uint32(dst[4*(ar+i):]))
	}
	return jumps, logprobs, nil
}

// Beams is the most sequences StepBeams decodes at once.
func (m *Model) Beams() int { return m.lay.beams }

// StepBeams feeds tokens[s] to sequence s at position pos, for every beam
// of the plan at once (len(tokens) == Beams()), and returns the logits of
// each ([beam][n_vocab]). The slice is reused by the next call.
func (m *Model) StepBeams(tokens []int32, pos int) ([]float32, error) {
	if len(tokens) != m.lay.beams || pos < 0 || pos >= m.H.NTextCtx {
		return nil, fmt.Errorf("whisper: cannot feed %d beams at position %d (plan has %d beams, context %d)", len(tokens), pos, m.lay.beams, m.H.NTextCtx)
	}
	if err := m.writeTokens(tokens); err != nil {
		return nil, err
	}
	m.vars = plan.Vars{plan.VarPos: int64(pos), plan.VarNTok: 1, plan.VarKVLen: int64(pos + 1)}
	if err := m.exec.Run(PassBeams, &m.vars); err != nil {
		return nil, err
	}
	out := m.logits[:m.lay.beams*m.H.NVocab]
	return out, m.readF32(m.lay.logits, 0, out)
}

// reorderKV makes the self-attention cache of sequence d a copy of that of
// sequence src[d], positions [lo, hi), for every d where they differ (the
// beams re-selected by a search step; positions before lo are known to be
// equal already, e.g. the shared prompt). Sources are read before any
// write, so src may be any mapping, a permutation included.
func (m *Model) reorderKV(src []int, lo, hi int) error {
	if len(src) > m.lay.beams || lo < 0 || hi < lo || hi > m.H.NTextCtx {
		return fmt.Errorf("whisper: cannot reorder %d beams over positions [%d, %d)", len(src), lo, hi)
	}
	moved, err := m.writeBeamSrc(src)
	if err != nil || !moved || hi == lo {
		return err
	}
	m.vars = plan.Vars{plan.VarPos: int64(lo), plan.VarNTok: int64(hi - lo)}
	return m.exec.Run(PassBeamCopy, &m.vars)
}

// writeBeamSrc writes src (beam d continues from beam src[d]; beams past
// len(src) stay) for PassBeamCopy, unless no beam moves.
func (m *Model) writeBeamSrc(src []int) (moved bool, err error) {
	for d, s := range src {
		if s < 0 || s >= m.lay.beams {
			return false, fmt.Errorf("whisper: beam source %d out of range", s)
		}
		moved = moved || s != d
	}
	if !moved {
		return false, nil
	}
	for d := range m.beamSrc {
		m.beamSrc[d] = int32(d)
	}
	for d, s := range src {
		m.beamSrc[d] = int32(s)
	}
	return true, plan.WriteI32(m.exec, m.lay.beamSrc, 0, m.beamSrc)
}

// broadcastKV copies positions [0, n) of sequence 0's cache to sequences
// 1..beams-1 (a prompt fed once, shared by every beam).
func (m *Model) broadcastKV(beams, n int) error {
	src := make([]int, beams)
	return m.reorderKV(src, 0, n)
}
