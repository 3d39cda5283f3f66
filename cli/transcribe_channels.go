package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
)

// speakerOf maps a --channels name to its speaker.
var speakerOf = map[string]int{"you": am.You, "others": am.Others}

// channelSpeakers parses --channels: one speaker a channel, in order.
func (fl *transcribeOptions) channelSpeakers() ([]int, error) {
	names := strings.Split(strings.ToLower(fl.channels), ",")
	if len(names) != am.Channels {
		return nil, fmt.Errorf("--channels %q: name the %d channels, e.g. you,others", fl.channels, am.Channels)
	}
	seen := map[int]bool{}
	var out []int
	for _, n := range names {
		sp, ok := speakerOf[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("--channels %q: unknown speaker %q (want you or others)", fl.channels, strings.TrimSpace(n))
		}
		if seen[sp] {
			return nil, fmt.Errorf("--channels %q names %s twice", fl.channels, strings.TrimSpace(n))
		}
		seen[sp] = true
		out = append(out, sp)
	}
	return out, nil
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
