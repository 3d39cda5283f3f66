// Package channels transcribes a two-channel recording (a meeting's: the
// microphone and the system audio) channel by channel, each as a meeting's
// live transcript's gate lets it through (Gated: no silence, where a model
// makes words up, nor the other side's echo), its times put back on the
// recording's timeline, its words its speaker's. A meeting's final pass in
// the app, the API's channels field and the CLI's --channels all run it,
// so a call recording reads the same whichever way it is transcribed; the
// live transcript (app/meeting) gates with the same Gate.
package channels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/speakers"
)

// RecordingOptions configure TranscribeRecording.
type RecordingOptions struct {
	// Speakers names each channel of the file, in order (speakers.You or
	// speakers.Others, each once); nil: {You, Others}, a meeting's own
	// order.
	Speakers []int
	// Transcribe are the decoding options; Words needs WordTimestamps.
	Transcribe whisper.TranscribeOptions
	// Gate tunes the gate (zero: the live transcript's defaults).
	Gate GateConfig
	// MaxDuration (> 0) bounds the recording's length: a longer one is
	// refused with a *mel.TooLongError as soon as it is read that far.
	MaxDuration time.Duration
	// Before runs before each channel (a dictation goes first); its
	// error ends the pass.
	Before func(context.Context) error
}

// ChannelTranscript is one channel's transcript, on the recording's
// timeline (segment and word times; Duration is the recording's).
type ChannelTranscript struct {
	Speaker int
	*whisper.Result
}

// AudioError is a recording that cannot be read: it cannot be decoded,
// it is too long (a *mel.TooLongError inside), or it has not two
// channels (a *ChannelCountError inside).
type AudioError struct{ Err error }

func (e *AudioError) Error() string { return e.Err.Error() }
func (e *AudioError) Unwrap() error { return e.Err }

// ChannelCountError is a file whose channels are not the ones named.
type ChannelCountError struct{ Named, Has int }

func (e *ChannelCountError) Error() string {
	return fmt.Sprintf("names %d channels; the file has %d", e.Named, e.Has)
}

// TranscribeRecording transcribes each channel of the two-channel
// recording at path, gated, with model m of file f; a silent channel
// (nothing let through, or nothing said) has no transcript. Errors about
// the file are an *AudioError (a *ChannelCountError inside when it has
// not two channels); ctx ends the pass.
func TranscribeRecording(ctx context.Context, f *whisper.File, m *whisper.Model, path string, opt RecordingOptions) ([]ChannelTranscript, error) {
	sp := opt.Speakers
	if sp == nil {
		sp = []int{speakers.You, speakers.Others}
	}
	if len(sp) != speakers.Count {
		return nil, fmt.Errorf("channels: %d speakers named for a recording's %d channels", len(sp), speakers.Count)
	}
	var out []ChannelTranscript
	for ch, who := range sp {
		if opt.Before != nil {
			if err := opt.Before(ctx); err != nil {
				return nil, err
			}
		}
		res, err := transcribeGated(ctx, f, m, path, ch, opt)
		if err != nil {
			return nil, fmt.Errorf("%s's channel: %w", speakers.Names[who], err)
		}
		if res != nil {
			out = append(out, ChannelTranscript{Speaker: who, Result: res})
		}
	}
	return out, nil
}

// transcribeGated transcribes channel ch gated, on the timeline (nil: it
// is silent).
func transcribeGated(ctx context.Context, f *whisper.File, m *whisper.Model, path string, ch int, opt RecordingOptions) (*whisper.Result, error) {
	g, err := openGated(ctx, path, ch, opt.Gate, opt.MaxDuration)
	if err != nil {
		return nil, &AudioError{err}
	}
	// StreamSpectrogram reads g to its end (and closes it): a read error
	// is the file's, or ctx's.
	spec, err := f.StreamSpectrogram(g, path, 0)
	if errors.Is(err, whisper.ErrNoAudio) {
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &AudioError{err}
	}
	defer spec.Close()
	res, err := f.TranscribeMel(ctx, m, spec, opt.Transcribe)
	if errors.Is(err, whisper.ErrSilent) || errors.Is(err, whisper.ErrNoAudio) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	onTimeline(res, g.Timeline)
	res.Duration = g.Duration()
	return res, nil
}

// onTimeline moves res's segment and word times by at.
func onTimeline(res *whisper.Result, at func(float64) float64) {
	for i := range res.Segments {
		s := &res.Segments[i]
		s.Start, s.End = at(s.Start), at(s.End)
		for j := range s.Words {
			w := &s.Words[j]
			w.Start, w.End = at(w.Start), at(w.End)
		}
	}
}

// Words are the transcripts' words with their speakers, merged by time.
func Words(ts []ChannelTranscript) []Word {
	var all []Word
	for _, t := range ts {
		all = append(all, ResultWords(t.Result, t.Speaker, 0, nil)...)
	}
	return MergeWords(all)
}
