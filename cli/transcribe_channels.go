package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
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

// transcribeChannels transcribes each channel of path as its speaker and
// writes the merged transcript (speaker lines by word time).
func transcribeChannels(ctx context.Context, mf *whisper.File, model *whisper.Model, opt whisper.TranscribeOptions, fix *rewrite.Rewriter, fl transcribeOptions, path string, idx, total int) error {
	speakers, err := fl.channelSpeakers()
	if err != nil {
		return err
	}
	chs, err := audio.LoadChannels16k(path)
	if err != nil {
		return err
	}
	if len(chs) != len(speakers) {
		return fmt.Errorf("--channels names %d channels; the file has %d", len(speakers), len(chs))
	}
	// Each channel as the meeting heard it: speech gated, the other
	// side's echo skipped, words placed by time.
	var byRole [am.Channels][]float32
	for i, x := range chs {
		byRole[speakers[i]] = x
	}
	sm := whisper.NewStreamModel(mf, model)
	sm.Options.Language, sm.Options.InitialPrompt = opt.Language, opt.InitialPrompt
	words, err := meeting.TranscribeChannels(ctx, [am.Channels]whisper.WindowTranscriber{sm, sm}, byRole, meeting.LiveConfig{})
	if err != nil {
		return err
	}
	notes := meeting.Notes{Title: filepath.Base(path), Lines: meeting.Lines(words)}
	if fix != nil { // on whole lines: a replacement may span words
		for i := range notes.Lines {
			notes.Lines[i].Text = fix.Apply(notes.Lines[i].Text)
		}
	}
	return writeResult(fl, path, idx, total, func(w io.Writer) error { return notes.Write(w, fl.format) })
}
