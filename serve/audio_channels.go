package serve

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
	"github.com/harkapp/hark/internal/speakers"
)

// The transcription endpoint's "channels" field ("you,others"): a
// two-channel file, such as a meeting recording, is transcribed as a
// meeting's final pass does (channels.TranscribeRecording: each channel
// gated, so neither its silences, where a model makes words up, nor the
// other side's echo are decoded; bounded by MaxAudioDuration), each
// channel's segments said by its speaker and merged by time. A silent
// channel has no segments.

// transcribeChannels transcribes each channel of the upload as its
// speaker and returns the segments merged by start time, with the
// speaker of each.
func (s *Server) transcribeChannels(ctx context.Context, sm *runtime.SpeechModel, req *audioRequest) (*whisper.Result, []string, error) {
	opt, fix, err := s.transcribeOptions(sm, req, "transcribe")
	if err != nil {
		return nil, nil, err
	}
	ts, err := channels.TranscribeRecording(ctx, sm.File, sm.Model, req.file, channels.RecordingOptions{
		Speakers: req.channels, Transcribe: opt, MaxDuration: s.cfg.MaxAudioDuration})
	var ae *channels.AudioError
	var ce *channels.ChannelCountError
	switch {
	case ctx.Err() != nil:
		return nil, nil, acquireError(context.Cause(ctx))
	case errors.As(err, &ce):
		return nil, nil, badRequest("channels", "channels "+ce.Error())
	case errors.As(err, &ae):
		return nil, nil, s.decodeError(ae.Err, req.file)
	case err != nil:
		return nil, nil, err
	}
	type said struct {
		seg whisper.Segment
		who int
	}
	var all []said
	out := &whisper.Result{}
	for _, t := range ts {
		if fix != nil {
			fix.ApplyResult(t.Result)
		}
		out.Duration = max(out.Duration, t.Duration)
		if out.Language == "" {
			out.Language = t.Language
		}
		for _, sg := range t.Segments {
			all = append(all, said{sg, t.Speaker})
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
