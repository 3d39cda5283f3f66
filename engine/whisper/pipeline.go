package whisper

import (
	"context"
	"fmt"

	"github.com/harkapp/hark/audio"
)

// TranscribeSamples transcribes 16 kHz mono samples: the log-mel of the
// whole audio with 30 s of silence appended (the model file's filters), then
// window by window.
func (f *File) TranscribeSamples(ctx context.Context, m *Model, samples []float32, opt TranscribeOptions) (*Result, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("whisper: no audio samples")
	}
	filters, err := audio.NewMelFilters(int(f.Mel.NMel), f.Mel.Data)
	if err != nil {
		return nil, err
	}
	spec, err := audio.LogMel(samples, filters, WindowSecs*SampleRate)
	if err != nil {
		return nil, err
	}
	content := spec.NFrames - m.H.NFrames()
	if content <= 0 {
		return &Result{Language: "en", Segments: []Segment{}}, nil
	}
	if opt.Suppress == nil {
		opt.Suppress = f.Vocab.DefaultSuppress()
	}
	if opt.SuppressBlank == nil {
		opt.SuppressBlank = f.Vocab.SuppressBlank()
	}
	res, err := m.Transcribe(ctx, spec.Data, spec.NFrames, content, f.Vocab, opt)
	if err != nil {
		return nil, err
	}
	if res.Segments == nil {
		res.Segments = []Segment{}
	}
	return res, nil
}

// TranscribeFile decodes an audio or video file and transcribes it.
func (f *File) TranscribeFile(ctx context.Context, m *Model, path string, opt TranscribeOptions) (*Result, error) {
	samples, err := audio.Load16k(path)
	if err != nil {
		return nil, err
	}
	return f.TranscribeSamples(ctx, m, samples, opt)
}
