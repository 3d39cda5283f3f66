package whisper

import (
	"context"
	"errors"
)

// CommittedPromptTokens is the committed text's fixed share of the
// decoder's prompt (at most n_text_ctx/2-1 = 223 tokens); the caller's
// InitialPrompt (custom vocabulary) gets the rest.
const CommittedPromptTokens = 120

// maxTokensPerSecond bounds a stream window's hypothesis (plus 20 tokens).
const maxTokensPerSecond = 10

// StreamModel is the WindowTranscriber over a loaded model: each window is
// transcribed in one pass, greedily at temperature 0 (no fallback: a
// stream step must cost one encoder pass and at most one window of
// tokens), with word timestamps.
type StreamModel struct {
	File  *File
	Model *Model
	// Options: Language, InitialPrompt (vocabulary) and the thresholds are
	// used; the rest is set per window.
	Options TranscribeOptions
	// BeforeWindow, if set, runs before every window; an error fails it.
	// The model is not in use meanwhile, so a cache can lend it to others
	// waiting for it (runtime.SpeechModel.Share).
	BeforeWindow func(ctx context.Context) error
}

// NewStreamModel is a StreamModel with the reference's thresholds.
func NewStreamModel(f *File, m *Model) *StreamModel {
	return &StreamModel{File: f, Model: m, Options: DefaultTranscribeOptions()}
}

// TranscribeWindow implements WindowTranscriber.
func (s *StreamModel) TranscribeWindow(ctx context.Context, samples []float32, prompt string) ([]Segment, error) {
	if s.BeforeWindow != nil {
		if err := s.BeforeWindow(ctx); err != nil {
			return nil, err
		}
	}
	opt := s.Options
	opt.Temperatures = []float32{0}
	opt.BeamSize = 1
	opt.WordTimestamps = true
	opt.MaxPasses = 1
	// Speech runs at 3-5 tokens a second: a hypothesis much longer than
	// that is a hallucination, and bounding it bounds the step's cost.
	opt.SampleLen = min(s.Model.H.NTextCtx/2, maxTokensPerSecond*len(samples)/SampleRate+20)
	opt.OnSegment, opt.OnProgress = nil, nil
	if !s.File.H.Multilingual() {
		opt.Language = "en"
	}
	keep := s.Model.H.NTextCtx/2 - 1
	var p []int32
	if prompt != "" {
		p = s.File.Vocab.Encode(prompt)
		p = p[max(0, len(p)-CommittedPromptTokens):]
	}
	vocab := opt.InitialPrompt
	vocab = vocab[:min(len(vocab), keep-len(p))]
	opt.InitialPrompt = append(append([]int32(nil), vocab...), p...)
	res, err := s.File.TranscribeSamples(ctx, s.Model, samples, opt)
	if errors.Is(err, ErrSilent) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return res.Segments, nil
}
