package whisper

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper/mel"
)

// Errors for audio with nothing to transcribe.
var (
	ErrNoAudio = errors.New("the file holds no audio samples")
	ErrSilent  = errors.New("the audio is silent (below -80 dBFS throughout)")
)

// silenceLevel is -80 dBFS: audio that never rises above it is digital
// silence, on which the model would only hallucinate.
const silenceLevel = 1e-4

// TranscribeSamples transcribes 16 kHz mono samples: the log-mel of the
// whole audio with 30 s of silence appended (the model file's filters), then
// window by window.
func (f *File) TranscribeSamples(ctx context.Context, m *Model, samples []float32, opt TranscribeOptions) (*Result, error) {
	if len(samples) == 0 {
		return nil, ErrNoAudio
	}
	filters, err := mel.NewMelFilters(int(f.Mel.NMel), f.Mel.Data)
	if err != nil {
		return nil, err
	}
	spec, err := mel.LogMel(samples, filters, WindowSecs*SampleRate)
	if err != nil {
		return nil, err
	}
	return f.TranscribeMel(ctx, m, spec, opt)
}

// TranscribeFile decodes an audio or video file as a stream and
// transcribes it, holding neither the audio nor its spectrogram in memory
// (FileSpectrogram).
func (f *File) TranscribeFile(ctx context.Context, m *Model, path string, opt TranscribeOptions) (*Result, error) {
	spec, err := f.FileSpectrogram(path, 0)
	if err != nil {
		return nil, err
	}
	defer spec.Close()
	return f.TranscribeMel(ctx, m, spec, opt)
}

// FileSpectrogram decodes an audio or video file as a stream into the
// log-mel spectrogram (with the model file's filters and 30 s of silence
// appended) that TranscribeMel takes, spooled to an unlinked temporary
// file: memory does not grow with the audio's length. Audio longer than
// maxDuration (> 0) is refused as soon as it is, with an
// *mel.TooLongError. Its errors are about the file: it cannot be
// decoded, is too long, or holds no audio (ErrNoAudio). Close the result.
func (f *File) FileSpectrogram(path string, maxDuration time.Duration) (*mel.SpooledSpectrogram, error) {
	s, err := audio.Open16k(path)
	if err != nil {
		return nil, err
	}
	return f.StreamSpectrogram(s, path, maxDuration)
}

// ChannelSpectrogram is FileSpectrogram of channel ch (from 0) alone.
func (f *File) ChannelSpectrogram(path string, ch int, maxDuration time.Duration) (*mel.SpooledSpectrogram, error) {
	s, err := audio.OpenChannel16k(path, ch)
	if err != nil {
		return nil, err
	}
	return f.StreamSpectrogram(s, path, maxDuration)
}

// StreamSpectrogram spools the log-mel of a 16 kHz mono stream (closed
// here; name is for messages).
func (f *File) StreamSpectrogram(s audio.Stream, name string, maxDuration time.Duration) (*mel.SpooledSpectrogram, error) {
	defer s.Close()
	filters, err := mel.NewMelFilters(int(f.Mel.NMel), f.Mel.Data)
	if err != nil {
		return nil, err
	}
	spec, err := mel.LogMelSpool(s, filters, WindowSecs*SampleRate, int(maxDuration.Seconds()*SampleRate))
	if errors.Is(err, audio.ErrNoAudio) {
		return nil, ErrNoAudio
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return spec, nil
}

// FallbackTemperatures is the reference's schedule: from t up to 1.0 in
// steps of 0.2.
func FallbackTemperatures(t float32) []float32 {
	var out []float32
	for v := float64(t); v <= 1.0+1e-6; v += 0.2 {
		out = append(out, float32(math.Round(v*100)/100))
	}
	return out
}

// Spectrogram is a log-mel spectrogram of audio followed by 30 s of
// silence (mel.Spectrogram from mel.LogMel in memory, or
// mel.SpooledSpectrogram from FileSpectrogram on disk).
type Spectrogram interface {
	MelWindows
	Dims() mel.Dims
}

// TranscribeMel transcribes a log-mel spectrogram, read a window at a time.
func (f *File) TranscribeMel(ctx context.Context, m *Model, spec Spectrogram, opt TranscribeOptions) (*Result, error) {
	d := spec.Dims()
	if d.NMels != m.H.NMels {
		return nil, fmt.Errorf("whisper: the spectrogram has %d mel bins, the model %d", d.NMels, m.H.NMels)
	}
	if d.Peak <= silenceLevel {
		return nil, ErrSilent
	}
	content := d.NFrames - m.H.NFrames()
	if content <= 0 {
		return &Result{Language: "en", Segments: []Segment{}}, nil
	}
	if opt.Suppress == nil {
		opt.Suppress = f.Vocab.DefaultSuppress()
	}
	if opt.SuppressBlank == nil {
		opt.SuppressBlank = f.Vocab.SuppressBlank()
	}
	res, err := m.Transcribe(ctx, spec, content, f.Vocab, opt)
	if err != nil {
		return nil, err
	}
	res.Duration = float64(content) * HopLength / SampleRate
	if res.Segments == nil {
		res.Segments = []Segment{}
	}
	return res, nil
}
