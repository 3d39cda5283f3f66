package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/speakers"
)

// channelSpeakers parses --channels: one speaker a channel, in order.
func (fl *transcribeOptions) channelSpeakers() ([]int, error) {
	sp, err := speakers.Parse(fl.channels)
	if err != nil {
		return nil, fmt.Errorf("--channels %w", err)
	}
	return sp, nil
}

func (fl *transcribeOptions) validateChannels() error {
	if _, err := fl.channelSpeakers(); err != nil {
		return err
	}
	if fl.translate {
		return errors.New("--channels cannot be combined with --translate (speakers are placed by word time)")
	}
	return nil
}

// transcribeChannels transcribes each channel of path as its speaker, as
// a meeting's final pass does (channels.TranscribeRecording: each channel
// gated, so neither its silences nor the other side's echo are decoded),
// and writes the merged transcript (speaker lines by word time).
func transcribeChannels(ctx context.Context, mf *whisper.File, model *whisper.Model, opt whisper.TranscribeOptions, fix *rewrite.Rewriter, fl transcribeOptions, path string, idx, total int) error {
	speakers, err := fl.channelSpeakers()
	if err != nil {
		return err
	}
	opt.WordTimestamps = true // speakers' lines are merged by word time
	ts, err := channels.TranscribeRecording(ctx, mf, model, path, channels.RecordingOptions{Speakers: speakers, Transcribe: opt})
	if ce := (*channels.ChannelCountError)(nil); errors.As(err, &ce) {
		return fmt.Errorf("--channels %w", ce)
	}
	if err != nil {
		return err
	}
	notes := meeting.Notes{Title: filepath.Base(path), Lines: meeting.Lines(channels.Words(ts))}
	if fix != nil { // on whole lines: a replacement may span words
		for i := range notes.Lines {
			notes.Lines[i].Text = fix.Apply(notes.Lines[i].Text)
		}
	}
	return writeResult(fl, path, idx, total, func(w io.Writer) error { return notes.Write(w, fl.format) })
}
