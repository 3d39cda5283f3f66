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
	"sync"
	"time"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
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
	// OnProgress, if set, gets the fraction of the speech let through
	// (both channels, by length) transcribed so far, after each window.
	OnProgress func(done float64)
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
// (nothing let through, or nothing said) has no transcript. The recording
// is decoded once for both channels. Errors about the file are an
// *AudioError (a *ChannelCountError inside when it has not two channels);
// ctx ends the pass.
func TranscribeRecording(ctx context.Context, f *whisper.File, m *whisper.Model, path string, opt RecordingOptions) ([]ChannelTranscript, error) {
	sp := opt.Speakers
	if sp == nil {
		sp = []int{speakers.You, speakers.Others}
	}
	if len(sp) != speakers.Count {
		return nil, fmt.Errorf("channels: %d speakers named for a recording's %d channels", len(sp), speakers.Count)
	}
	gs, specs, err := spool(ctx, f, path, sp, opt)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, spec := range specs {
			if spec != nil {
				spec.Close()
			}
		}
	}()
	progress := channelProgress(specs, opt.OnProgress)
	var out []ChannelTranscript
	for ch, who := range sp {
		if opt.Before != nil {
			if err := opt.Before(ctx); err != nil {
				return nil, err
			}
		}
		if specs[ch] == nil {
			continue // nothing let through
		}
		topt := opt.Transcribe
		if progress != nil {
			topt.OnProgress = func(done float64) { progress(ch, done) }
		}
		res, err := f.TranscribeMel(ctx, m, specs[ch], topt)
		if progress != nil {
			progress(ch, 1) // also when silent, or shorter than a window
		}
		if errors.Is(err, whisper.ErrSilent) || errors.Is(err, whisper.ErrNoAudio) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s's channel: %w", speakers.Names[who], err)
		}
		onTimeline(res, gs[ch].Timeline)
		res.Duration = gs[ch].Duration()
		out = append(out, ChannelTranscript{Speaker: who, Result: res})
	}
	return out, nil
}

// channelProgress makes the per-channel progress (channel, fraction of
// it done) into the pass's, each channel weighted by the frames it let
// through; nil without on.
func channelProgress(specs [speakers.Count]*mel.SpooledSpectrogram, on func(float64)) func(ch int, done float64) {
	if on == nil {
		return nil
	}
	var before [speakers.Count]int // the frames of the channels before each
	total := 0
	for ch, spec := range specs {
		before[ch] = total
		if spec != nil {
			total += spec.NFrames
		}
	}
	return func(ch int, done float64) {
		if total > 0 {
			on((float64(before[ch]) + done*float64(specs[ch].NFrames)) / float64(total))
		}
	}
}

// spool reads the recording once, both channels gated in step, each into
// its own log-mel spool on disk (nil: nothing let through), a goroutine a
// channel.
func spool(ctx context.Context, f *whisper.File, path string, sp []int, opt RecordingOptions) ([speakers.Count]*Gated, [speakers.Count]*mel.SpooledSpectrogram, error) {
	var specs [speakers.Count]*mel.SpooledSpectrogram
	gs, err := openGatedPair(ctx, path, opt.Gate, opt.MaxDuration)
	if err != nil {
		return gs, specs, &AudioError{err}
	}
	var errs [speakers.Count]error
	var wg sync.WaitGroup
	for ch, g := range gs {
		// StreamSpectrogram reads g to its end (and closes it): a read
		// error is the file's, or ctx's.
		wg.Go(func() { specs[ch], errs[ch] = f.StreamSpectrogram(g, path, 0) })
	}
	wg.Wait()
	for ch, err := range errs {
		if err == nil || errors.Is(err, whisper.ErrNoAudio) {
			continue
		}
		for _, spec := range specs {
			if spec != nil {
				spec.Close()
			}
		}
		if ctx.Err() != nil {
			return gs, [speakers.Count]*mel.SpooledSpectrogram{}, context.Cause(ctx)
		}
		return gs, [speakers.Count]*mel.SpooledSpectrogram{}, fmt.Errorf("%s's channel: %w", speakers.Names[sp[ch]], &AudioError{err})
	}
	return gs, specs, nil
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
