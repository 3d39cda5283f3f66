package whisper

import (
	"context"
	"errors"

	"github.com/harkapp/hark/audio"
)

// Errors for audio with nothing to transcribe.
var (
	ErrNoAudio = errors.New("the file holds no audio samples")
	ErrSilent  = errors.New("the audio is silent (below -80 dBFS throughout)")
)

// silent reports whether no sample reaches -80 dBFS: digital silence, for
// which the model would only hallucinate.
func silent(samples []float32) bool {
	for _, v := range samples {
		if v > 1e-4 || v < -1e-4 {
			return false
		}
	}
	return true
}

// TranscribeSamples transcribes 16 kHz mono samples: the log-mel of the
// whole audio with 30 s of silence appended (the model file's filters), then
// window by window.
func (f *File) TranscribeSamples(ctx context.Context, m *Model, samples []float32, opt TranscribeOptions) (*Result, error) {
	if len(samples) == 0 {
		return nil, ErrNoAudio
	}
	if silent(samples) {
		return nil, ErrSilent
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
