package llm

import "github.com/harkapp/hark/engine/tokenizer"

// TextOut turns a generation's tokens, as they are taken, into its result
// and streamed text: stop tokens (unless IgnoreEOS), stop strings (held
// back until the following text decides), OnToken and the logprobs
// records. Generator.Generate and the batched engine (engine/batch) both
// end their generations through it, so one request gets the same answer
// from either.
type TextOut struct {
	o     GenerateOptions
	stops map[int32]bool
	st    *stopper
	dec   *tokenizer.StreamDecoder
	emit  func(string) error
	res   Result
}

// NewTextOut starts a generation's text after the context tokens ctx
// (they prime the decoder, so the continuation's first token keeps its
// leading space); emit (may be nil) gets each piece of text as it is
// decided.
func NewTextOut(tk *tokenizer.Tokenizer, ctx []int32, o GenerateOptions, emit func(string) error) *TextOut {
	t := &TextOut{o: o, stops: map[int32]bool{}, st: &stopper{stops: o.Stop}, dec: tk.NewStreamDecoder(true), emit: emit}
	t.res.PromptTokens = len(ctx)
	for _, id := range ctx {
		t.dec.Add(id)
	}
	if !o.IgnoreEOS {
		for _, id := range tk.StopIDs() {
			t.stops[id] = true
		}
	}
	return t
}

// Result is the generation so far.
func (t *TextOut) Result() Result { return t.res }

func (t *TextOut) out(s string) error {
	if s == "" {
		return nil
	}
	t.res.Text += s
	if t.emit != nil {
		return t.emit(s)
	}
	return nil
}

// Take records a generated token, with its logprobs record when the
// sampler asked for them (lp.Token is tok); done reports that the
// generation ends with reason r. An error (OnToken's, emit's) ends it too.
func (t *TextOut) Take(tok int32, lp TokenLogprob) (done bool, r StopReason, err error) {
	t.res.Tokens = append(t.res.Tokens, tok)
	lp.Token = tok
	if t.o.Sampler.Logprobs {
		t.res.Logprobs = append(t.res.Logprobs, lp)
	}
	if t.o.OnToken != nil {
		if err := t.o.OnToken(lp); err != nil {
			return true, "", err
		}
	}
	if t.stops[tok] {
		return true, StopEOS, nil
	}
	text, hit := t.st.push(t.dec.Add(tok))
	if err := t.out(text); err != nil {
		return true, "", err
	}
	if hit {
		return true, StopString, nil
	}
	return false, "", nil
}

// Finish ends the generation with reason r: the text held back (a
// possible stop string's start, a partial character) is emitted unless a
// stop string ended it.
func (t *TextOut) Finish(r StopReason) (Result, error) {
	t.res.Reason = r
	if r != StopString {
		if err := t.out(t.st.flush() + t.dec.Flush()); err != nil {
			return t.res, err
		}
	}
	return t.res, nil
}
