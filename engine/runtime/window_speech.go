package runtime

import (
	"context"

	"github.com/harkapp/hark/engine/whisper"
)

// WindowSpeech is a whisper.WindowTranscriber for a live stream (a
// meeting's channel, an API stream) that takes the speech model for each
// window and gives it back after it. A dictation asking for the model then
// waits at most for the window in progress, and not at all while the
// stream is quiet or its client sends nothing: a stream holding the model
// from start to end kept it through every pause.
type WindowSpeech struct {
	// Take waits for the model, at the stream's priority.
	Take func(ctx context.Context) (*SpeechModel, error)
	// Set adjusts each window's transcriber (language, the vocabulary
	// prompt); nil keeps the defaults.
	Set func(*whisper.StreamModel)
}

// TranscribeWindow implements whisper.WindowTranscriber.
func (w WindowSpeech) TranscribeWindow(ctx context.Context, samples []float32, prompt string) ([]whisper.Segment, error) {
	m, err := w.Take(ctx)
	if err != nil {
		return nil, err
	}
	defer m.Release()
	sm := whisper.NewStreamModel(m.File, m.Model)
	if w.Set != nil {
		w.Set(sm)
	}
	return sm.TranscribeWindow(ctx, samples, prompt)
}
