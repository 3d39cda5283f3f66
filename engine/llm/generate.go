package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/tokenizer"
)

// StopReason says why a generation ended.
type StopReason string

const (
	StopMaxTokens StopReason = "max_tokens" // GenerateOptions.MaxTokens reached
	StopEOS       StopReason = "eos"        // an end-of-sequence/turn token
	StopString    StopReason = "stop"       // a stop string (not in Text)
	StopContext   StopReason = "context"    // the context is full (with ErrContextFull)
	StopCanceled  StopReason = "canceled"   // the context.Context was canceled
)

// GenerateOptions control one generation.
type GenerateOptions struct {
	Sampler Sampler
	// MaxTokens is the most tokens generated (0: until the context is full).
	MaxTokens int
	// IgnoreEOS keeps generating through the tokenizer's stop tokens.
	IgnoreEOS bool
	// Stop strings end the generation; the text is cut before them.
	Stop []string
	// Slide chooses what happens when the context fills during generation:
	// false stops with ErrContextFull; true drops the older half of the
	// context after its first Keep tokens (BOS, a system prompt), re-reads
	// what remains and carries on.
	Slide bool
	Keep  int
	// OnToken, when set, sees each generated token as it is taken (before
	// its text is emitted), with its log-probabilities when
	// Sampler.Logprobs is set; an error ends the generation.
	OnToken func(TokenLogprob) error
}

// Result is what a generation produced.
type Result struct {
	Tokens []int32 // generated tokens (a stop token included)
	Text   string  // the streamed text
	Reason StopReason
	// PromptTokens is how many tokens the answer continued: the whole
	// prompt, those taken from the KV cache included (an API's
	// usage.prompt_tokens). It is the result's own, where a session's
	// fields are shared by the requests a batch decodes together.
	PromptTokens int
	// Logprobs has one entry per token of Tokens when Sampler.Logprobs
	// is set.
	Logprobs []TokenLogprob
}

// Generator turns a model and its tokenizer into streamed text.
type Generator struct {
	M  *Model
	Tk *tokenizer.Tokenizer
}

// NewGenerator pairs a loaded model with its tokenizer.
func NewGenerator(m *Model, tk *tokenizer.Tokenizer) *Generator {
	return &Generator{M: m, Tk: tk}
}

// AddBOS reports whether prompts of f start with BOS:
// tokenizer.ggml.add_bos_token when the file has it, else the
// architecture's default (on for the llama family).
func AddBOS(f *gguf.File, a Arch) bool {
	if v, ok := f.Get("tokenizer.ggml.add_bos_token"); ok {
		if b, ok := v.Bool(); ok {
			return b
		}
	}
	return a.AddBOS
}

// PromptTokens tokenizes text (special-token text is recognised), with BOS
// first when addBOS is set and the vocabulary has one.
func (g *Generator) PromptTokens(text string, addBOS bool) []int32 {
	ids := g.Tk.Encode(text, false)
	if bos := g.Tk.Special().BOS; addBOS && bos >= 0 {
		ids = append([]int32{bos}, ids...)
	}
	return ids
}

// Generate feeds prompt after the tokens already in the model's context
// and generates, calling emit with each piece of text as it is decided.
// At the context limit it returns ErrContextFull (wrapped) with the
// partial result.
func (g *Generator) Generate(ctx context.Context, prompt []int32, o GenerateOptions, emit func(string) error) (Result, error) {
	m := g.M
	var res Result
	if len(prompt) == 0 && m.Pos() == 0 {
		return res, errors.New("llm: nothing to continue: the prompt is empty and the model has no BOS token")
	}
	if err := o.Sampler.Check(m.H.NVocab); err != nil {
		return res, err
	}
	if m.Pos()+len(prompt) > m.Context() {
		return res, fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContextFull, m.Pos()+len(prompt), m.Context())
	}
	// The decoder is primed with the context so the continuation's first
	// token keeps its leading space.
	out := NewTextOut(g.Tk, append(slices.Clone(m.Tokens()), prompt...), o, emit)
	if len(prompt) > 0 {
		if err := m.feed(prompt); err != nil {
			return out.Result(), err
		}
	}
	// The backend selects every token: argmax, or the Sample pass with
	// this generation's settings, so only ids (and logprobs records) are
	// read back.
	sample := !o.Sampler.argmax()
	if sample {
		if err := m.setSampler(o.Sampler); err != nil {
			return out.Result(), err
		}
	}
	finish := out.Finish
	// take records a token selected into tokens[slot]; done reports that
	// generation ends with reason r.
	take := func(tok int32, slot int) (done bool, r StopReason, err error) {
		lp := TokenLogprob{Token: tok}
		if o.Sampler.Logprobs {
			if err := m.logprobs(slot, o.Sampler.TopLogprobs, &lp); err != nil {
				return true, "", err
			}
		}
		return out.Take(tok, lp)
	}
	// A backend that chains steps (a GPU) decodes many tokens per call,
	// reading back only their ids.
	ch, chains := m.exec.(plan.Chainer)
	for i := 0; o.MaxTokens <= 0 || i < o.MaxTokens; i++ {
		if err := ctx.Err(); err != nil {
			return finish(StopCanceled)
		}
		if i > 0 && chains && m.Pos() < m.Context() {
			n := maxChain
			if o.MaxTokens > 0 {
				n = min(n, o.MaxTokens-i)
			}
			var (
				ended  bool
				reason StopReason
				terr   error
			)
			taken, err := m.chain(ch, n, sample, uint64(i), func(tok int32, slot int) bool {
				ended, reason, terr = take(tok, slot)
				if !ended && ctx.Err() != nil {
					ended, reason = true, StopCanceled
				}
				return !ended
			})
			if err != nil {
				return out.Result(), err
			}
			if terr != nil {
				return out.Result(), terr
			}
			if ended {
				return finish(reason)
			}
			if taken == 0 {
				return out.Result(), errors.New("llm: the backend stopped a decode chain without a token")
			}
			i += taken - 1
			continue
		}
		if i > 0 {
			err := m.stepNext()
			if errors.Is(err, ErrContextFull) && o.Slide {
				toks := out.Result().Tokens
				err = g.slide(o.Keep, toks[len(toks)-1])
			}
			if errors.Is(err, ErrContextFull) {
				r, _ := finish(StopContext)
				return r, err
			}
			if err != nil {
				return out.Result(), err
			}
		}
		slot := m.Pos()
		tok, err := m.selectNext(sample, uint64(i))
		if err != nil {
			return out.Result(), err
		}
		if done, r, err := take(tok, slot); err != nil {
			return out.Result(), err
		} else if done {
			return finish(r)
		}
	}
	return finish(StopMaxTokens)
}

// slide drops the older half of the context after its first keep tokens,
// rebuilds the KV cache from what remains (positions change, so the cache
// is recomputed rather than shifted) and feeds pending, the token chosen
// but not yet fed.
func (g *Generator) slide(keep int, pending int32) error {
	m := g.M
	toks := append([]int32(nil), m.Tokens()...)
	keep = min(max(keep, 0), len(toks))
	drop := max(1, (len(toks)-keep)/2)
	if keep+drop > len(toks) {
		return fmt.Errorf("%w: nothing left to drop after the first %d tokens", ErrContextFull, keep)
	}
	kept := append(toks[:keep:keep], toks[keep+drop:]...)
	m.Reset()
	if len(kept) > 0 {
		if err := m.feed(kept); err != nil {
			return err
		}
	}
	return m.feed([]int32{pending})
}
