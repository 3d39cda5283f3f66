// Package whisper runs OpenAI's Whisper speech-recognition models (every
// size, English-only and multilingual, f32/f16/quantized whisper.cpp files)
// through the engine's plans.
package whisper

import "fmt"

// HParams are a model's dimensions, as stored in whisper.cpp files and in
// openai-whisper's ModelDimensions.
type HParams struct {
	NVocab      int
	NAudioCtx   int
	NAudioState int
	NAudioHead  int
	NAudioLayer int
	NTextCtx    int
	NTextState  int
	NTextHead   int
	NTextLayer  int
	NMels       int
}

// Validate rejects dimensions no Whisper model has, before any buffer is
// sized from them.
func (h HParams) Validate() error {
	checks := []struct {
		name   string
		v, max int
	}{
		{"n_vocab", h.NVocab, 1 << 20},
		{"n_audio_ctx", h.NAudioCtx, 1 << 14},
		{"n_audio_state", h.NAudioState, 1 << 14},
		{"n_audio_head", h.NAudioHead, 1 << 8},
		{"n_audio_layer", h.NAudioLayer, 1 << 8},
		{"n_text_ctx", h.NTextCtx, 1 << 14},
		{"n_text_state", h.NTextState, 1 << 14},
		{"n_text_head", h.NTextHead, 1 << 8},
		{"n_text_layer", h.NTextLayer, 1 << 8},
		{"n_mels", h.NMels, 1 << 10},
	}
	for _, c := range checks {
		if c.v <= 0 || c.v > c.max {
			return fmt.Errorf("whisper: %s = %d is out of range", c.name, c.v)
		}
	}
	if h.NAudioState%h.NAudioHead != 0 || h.NTextState%h.NTextHead != 0 {
		return fmt.Errorf("whisper: state size is not a multiple of the head count")
	}
	return nil
}

// Multilingual reports whether the vocabulary is the multilingual one
// (51865 tokens, or 51866 for large-v3).
func (h HParams) Multilingual() bool { return h.NVocab >= 51865 }

// NFrames is the number of mel frames of one 30-s window (2 × audio ctx).
func (h HParams) NFrames() int { return 2 * h.NAudioCtx }
