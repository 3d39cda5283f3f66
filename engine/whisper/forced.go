package whisper

import "fmt"

// WindowTrace is one decoded 30-s window of a transcription
// (TranscribeOptions.OnWindow): enough to replay its decode exactly.
type WindowTrace struct {
	Seek    int       // first mel frame of the window
	Mel     []float32 // the window's spectrogram, as passed to Encode
	Options DecodeOptions
	Result  *DecodeResult // the accepted decode (after any fallback)
}

// ForceDecode replays a decode of the window last passed to Encode with
// its tokens forced (teacher forcing): it feeds opt's initial tokens, then
// before each of tokens calls step with the step number and that step's
// logits after the decoder's filters (those the decode chose tokens[i]
// from), then feeds tokens[i]. step must not keep the slice. A model
// loaded with several beams replays the batched beam pass, every beam fed
// the same token, and reports the last beam's row (the per-sequence
// offsets of the beam kernels are exercised). Comparing two backends'
// steps shows where they would diverge on the same history, which a
// free-running decode cannot tell from a near-tie (CompareForced).
func (m *Model) ForceDecode(opt DecodeOptions, tokens []int32, step func(i int, logits []float32) error) error {
	sp, err := SpecialsFor(m.H.NVocab)
	if err != nil {
		return err
	}
	init, sotIndex, err := m.initialTokens(sp, &opt)
	if err != nil {
		return err
	}
	if len(init)+len(tokens) > m.H.NTextCtx+1 {
		return fmt.Errorf("whisper: cannot force %d tokens after %d initial ones (context %d)", len(tokens), len(init), m.H.NTextCtx)
	}
	filter := newLogitFilter(sp, &opt)
	logits, pos, err := m.promptWindow(sp, init, sotIndex, nil)
	if err != nil {
		return err
	}
	nb := m.lay.beams
	if nb > 1 {
		if err := m.broadcastKV(nb, pos); err != nil {
			return err
		}
	}
	feed := make([]int32, nb)
	buf := make([]float32, m.H.NVocab)
	for i, tok := range tokens {
		copy(buf, logits)
		filter.apply(buf, tokens[:i])
		if err := step(i, buf); err != nil {
			return err
		}
		if i == len(tokens)-1 {
			break
		}
		if nb > 1 {
			for s := range feed {
				feed[s] = tok
			}
			out, err := m.StepBeams(feed, pos)
			if err != nil {
				return err
			}
			logits = out[(nb-1)*m.H.NVocab:]
		} else if logits, err = m.Prompt([]int32{tok}, pos); err != nil {
			return err
		}
		pos++
	}
	return nil
}
