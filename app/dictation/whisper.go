package dictation

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/harkapp/hark/engine/whisper"
)

// Whisper transcribes with the project's engine. The app's model cache
// owns File and Model (loaded once, kept while idle); this only calls
// them, one transcription at a time (a Model is not safe for concurrent
// use).
type Whisper struct {
	File  *whisper.File
	Model *whisper.Model
	// Options, if set, replaces DictationOptions().
	Options *whisper.TranscribeOptions

	mu sync.Mutex
}

// DictationOptions are the reference defaults, tuned for latency on short
// utterances: greedy decoding, no word timestamps. Temperature fallback is
// kept: it costs nothing when the first pass is confident.
func DictationOptions() whisper.TranscribeOptions {
	o := whisper.DefaultTranscribeOptions()
	o.ConditionOnPreviousText = false // one short window: no prompt to carry
	return o
}

// Transcribe implements Transcriber.
func (w *Whisper) Transcribe(ctx context.Context, samples []float32, language string) (Transcript, error) {
	if w.File == nil || w.Model == nil {
		return Transcript{}, errors.New("dictation: no speech model loaded")
	}
	opt := DictationOptions()
	if w.Options != nil {
		opt = *w.Options
	}
	if language == "auto" {
		language = ""
	}
	opt.Language = language
	if !w.File.H.Multilingual() {
		opt.Language = "en"
	}
	w.mu.Lock()
	res, err := w.File.TranscribeSamples(ctx, w.Model, samples, opt)
	w.mu.Unlock()
	if err != nil {
		return Transcript{}, err
	}
	t := Transcript{Text: strings.TrimSpace(res.Text), Language: res.Language}
	for _, s := range res.Segments {
		t.Segments = append(t.Segments, Segment{Start: s.Start, End: s.End, Text: strings.TrimSpace(s.Text)})
	}
	return t, nil
}
