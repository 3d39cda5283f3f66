package serve

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/speakers"
)

// The transcription endpoint's "channels" field ("you,others"): a
// two-channel file, such as a meeting recording, is transcribed channel
// by channel, as a meeting's final pass does (the log-mel of each spooled
// to disk, bounded by MaxAudioDuration), each channel's segments said by
// its speaker and merged by time. A silent channel has no segments.

// transcribeChannels transcribes each channel of the upload as its
// speaker and returns the segments merged by start time, with the
// speaker of each.
func (s *Server) transcribeChannels(ctx context.Context, sm *runtime.SpeechModel, req *audioRequest) (*whisper.Result, []string, error) {
	opt, fix, err := s.transcribeOptions(sm, req, "transcribe")
	if err != nil {
		return nil, nil, err
	}
	st, err := audio.Open(req.file)
	if err != nil {
		return nil, nil, s.decodeError(err, req.file)
	}
	n := st.Channels()
	st.Close()
	if n != len(req.channels) {
		return nil, nil, badRequest("channels", fmt.Sprintf("channels names %d channels; the file has %d", len(req.channels), n))
	}
	type said struct {
		seg whisper.Segment
		who int
	}
	var all []said
	out := &whisper.Result{}
	for ch, who := range req.channels {
		spec, err := sm.File.ChannelSpectrogram(req.file, ch, s.cfg.MaxAudioDuration)
		if errors.Is(err, whisper.ErrNoAudio) {
			continue
		}
		if err != nil {
			return nil, nil, s.decodeError(err, req.file)
		}
		res, err := sm.File.TranscribeMel(ctx, sm.Model, spec, opt)
		spec.Close()
		if errors.Is(err, whisper.ErrSilent) || errors.Is(err, whisper.ErrNoAudio) {
			continue // this side said nothing
		}
		if ctx.Err() != nil {
			return nil, nil, acquireError(context.Cause(ctx))
		}
		if err != nil {
			return nil, nil, err
		}
		if fix != nil {
			fix.ApplyResult(res)
		}
		out.Duration = max(out.Duration, res.Duration)
		if out.Language == "" {
			out.Language = res.Language
		}
		for _, sg := range res.Segments {
			all = append(all, said{sg, who})
		}
	}
	if out.Language == "" {
		return nil, nil, badRequest("file", "neither channel holds speech")
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].seg.Start < all[j].seg.Start })
	who := make([]string, len(all))
	var text []string
	for i, a := range all {
		a.seg.ID = i
		out.Segments = append(out.Segments, a.seg)
		who[i] = speakers.Names[a.who]
		text = append(text, strings.TrimSpace(a.seg.Text))
	}
	out.Text = strings.Join(text, " ")
	return out, who, nil
}

// labeled returns res with each segment's text said by its speaker
// (speakers.Cue: "You: ..." or a WebVTT voice tag), and the text as one
// such line a segment.
func labeled(res *whisper.Result, who []string, vtt bool) (*whisper.Result, string) {
	out := *res
	out.Segments = make([]whisper.Segment, len(res.Segments))
	var lines []string
	for i, sg := range res.Segments {
		t := strings.TrimSpace(sg.Text)
		lines = append(lines, speakers.Cue(who[i], t, false))
		sg.Text = speakers.Cue(who[i], t, vtt)
		out.Segments[i] = sg
	}
	return &out, strings.Join(lines, "\n")
}

// speakerOf is segment i's speaker ("" without channels).
func speakerOf(who []string, i int) string {
	if i < len(who) {
		return who[i]
	}
	return ""
}
