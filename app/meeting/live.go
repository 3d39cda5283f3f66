package meeting

import (
	"context"
	"sort"
	"strings"
	"time"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/audio/vad"
	"github.com/harkapp/hark/engine/whisper"
)

// Word is a transcribed word on the meeting's timeline (seconds from its
// start), with its speaker (am.You or am.Others).
type Word struct {
	Speaker int     `json:"speaker"`
	Text    string  `json:"text"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
}

// LiveConfig configures a Live transcription.
type LiveConfig struct {
	// Stream tunes each channel's streaming transcriber.
	Stream whisper.StreamConfig
	// VAD tunes the voice-activity gate.
	VAD vad.Config
	// Echo tunes echo detection.
	Echo EchoConfig
	// OnWords gets each channel's newly committed words.
	OnWords func(words []Word)
}

const (
	rate16k = whisper.SampleRate
	// preRoll is the audio before the detector's onset that a channel's
	// transcriber gets: the detector needs a few frames to be sure.
	preRoll = rate16k * 3 / 10
	// history is the audio kept per channel for the pre-roll and the
	// echo comparison (the window plus the longest echo delay).
	history = rate16k * 3 / 2
)

// span maps audio fed to a channel's transcriber back to the timeline.
type span struct{ fed, at int64 }

type channel struct {
	id      int
	st      *whisper.Streamer
	det     *vad.Detector
	hist    []float32
	open    bool
	quiet   int64 // samples since the gate last heard (non-echo) speech
	fed     int64
	spans   []span
	words   int // committed words handed on
	fresh   bool
	Skipped int64 // speech samples not transcribed as echo
}

// Live transcribes a meeting's two channels as the frames arrive: a voice
// activity gate lets only speech (with a little pre-roll) through to each
// channel's streaming transcriber, so silence costs nothing; speech that
// is the other channel's echo is not transcribed; committed words come
// out on the timeline with their speaker. Not safe for concurrent use:
// one goroutine writes (decoding runs inside Write).
type Live struct {
	cfg  LiveConfig
	ch   [am.Channels]*channel
	pos  int64 // timeline samples seen
	hang int64
}

// NewLive makes a live transcription over one window transcriber per
// channel (they may share a model only if the caller serialises them;
// Live calls them from its one goroutine).
func NewLive(tr [am.Channels]whisper.WindowTranscriber, cfg LiveConfig) *Live {
	l := &Live{cfg: cfg}
	pause := cfg.Stream.Pause
	if pause <= 0 {
		pause = 800 * time.Millisecond
	}
	// The gate stays open past the transcriber's own pause, so that it
	// sees the utterance end and commits it.
	l.hang = int64(pause.Seconds()*rate16k) + rate16k/5
	for i := range l.ch {
		c := &channel{id: i, det: vad.NewDetector(cfg.VAD)}
		c.st = whisper.NewStreamer(tr[i], cfg.Stream, func(e whisper.StreamEvent) {
			if e.Type == whisper.EventCommitted {
				c.fresh = true
			}
		})
		l.ch[i] = c
	}
	return l
}

// gateChunk is the step the gate decides on (20 ms).
const gateChunk = rate16k / 50

// Write adds interleaved frames {You, Others}.
func (l *Live) Write(ctx context.Context, frames []float32) error {
	n := len(frames) / am.Channels
	var x [am.Channels][]float32
	for i := range x {
		x[i] = make([]float32, n)
		for j := range n {
			x[i][j] = frames[j*am.Channels+i]
		}
	}
	for off := 0; off < n; off += gateChunk {
		end := min(off+gateChunk, n)
		for i, c := range l.ch {
			c.det.Write(x[i][off:end])
			c.hist = appendHistory(c.hist, x[i][off:end])
		}
		for i, c := range l.ch {
			if err := l.gate(ctx, c, l.ch[1-i], x[i][off:end]); err != nil {
				return err
			}
		}
		l.pos += int64(end - off)
		l.handOn() // at once: a long backlog must not hold back the words decoded early in it
	}
	return nil
}

// Heard is how far into the meeting the live transcription has taken its
// audio, in seconds (call it from OnWords or the goroutine that writes).
func (l *Live) Heard() float64 { return float64(l.pos) / rate16k }

func appendHistory(h, x []float32) []float32 {
	h = append(h, x...)
	if over := len(h) - history; over > 0 {
		h = h[:copy(h, h[over:])]
	}
	return h
}

// gate feeds c's transcriber while c has speech that is not the other's
// echo, and for a while after.
func (l *Live) gate(ctx context.Context, c, other *channel, x []float32) error {
	speech := c.det.Speaking()
	if speech {
		if echo, _ := IsEcho(c.hist, other.hist, l.cfg.Echo); echo {
			// What c hears now is the other side: close the gate at once.
			c.Skipped += int64(len(x))
			c.open = false
			return nil
		}
	}
	if speech {
		c.quiet = 0
	} else {
		c.quiet += int64(len(x))
	}
	if !c.open {
		if !speech {
			return nil
		}
		// Open with the pre-roll that came before this chunk.
		pre := c.hist[:len(c.hist)-len(x)]
		pre = pre[max(0, len(pre)-preRoll):]
		c.open = true
		c.spans = append(c.spans, span{fed: c.fed, at: l.pos - int64(len(pre))})
		if err := l.feed(ctx, c, pre); err != nil {
			return err
		}
	}
	if c.quiet > l.hang {
		c.open = false
		return nil
	}
	return l.feed(ctx, c, x)
}

func (l *Live) feed(ctx context.Context, c *channel, x []float32) error {
	if len(x) == 0 {
		return nil
	}
	c.fed += int64(len(x))
	return c.st.Write(ctx, x)
}

// timeline maps a time in c's fed audio (seconds) to the meeting's.
func (c *channel) timeline(t float64) float64 {
	s := int64(t * rate16k)
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].fed > s }) - 1
	if i < 0 {
		return t
	}
	return float64(c.spans[i].at+s-c.spans[i].fed) / rate16k
}

// ResultWords returns a transcript's words from the k-th on as speaker's,
// their times mapped by at (nil: as they are).
func ResultWords(res *whisper.Result, speaker, k int, at func(float64) float64) []Word {
	if at == nil {
		at = func(t float64) float64 { return t }
	}
	var out []Word
	i := 0
	for _, seg := range res.Segments {
		for _, w := range seg.Words {
			if i >= k && strings.TrimSpace(w.Word) != "" {
				out = append(out, Word{Speaker: speaker, Text: strings.TrimSpace(w.Word), Start: at(w.Start), End: at(w.End)})
			}
			i++
		}
	}
	return out
}

func countWords(res *whisper.Result) int {
	n := 0
	for _, s := range res.Segments {
		n += len(s.Words)
	}
	return n
}

// handOn gives OnWords what each channel committed since last time.
func (l *Live) handOn() {
	for _, c := range l.ch {
		if !c.fresh {
			continue
		}
		c.fresh = false
		res := c.st.Result()
		if ws := ResultWords(res, c.id, c.words, c.timeline); len(ws) > 0 && l.cfg.OnWords != nil {
			l.cfg.OnWords(ws)
		}
		c.words = countWords(res)
	}
}

// Decodes counts each channel's window decodes (silence costs none).
func (l *Live) Decodes() [am.Channels]int {
	return [am.Channels]int{l.ch[0].st.Decodes(), l.ch[1].st.Decodes()}
}

// Skipped is the speech on each channel not transcribed as echo, in
// seconds.
func (l *Live) Skipped() [am.Channels]float64 {
	return [am.Channels]float64{float64(l.ch[0].Skipped) / rate16k, float64(l.ch[1].Skipped) / rate16k}
}

// Finish decodes both channels' tails and returns every word, merged by
// time.
func (l *Live) Finish(ctx context.Context) ([]Word, error) {
	var all []Word
	for _, c := range l.ch {
		res, err := c.st.Finish(ctx)
		if err != nil {
			return nil, err
		}
		c.fresh = true
		all = append(all, ResultWords(res, c.id, 0, c.timeline)...)
	}
	l.handOn()
	return MergeWords(all), nil
}

// MergeWords orders words by start time (the microphone first on a tie).
func MergeWords(ws []Word) []Word {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Start != ws[j].Start {
			return ws[i].Start < ws[j].Start
		}
		return ws[i].Speaker < ws[j].Speaker
	})
	return ws
}

// TranscribeChannels runs recorded channels ({You, Others}, 16 kHz; the
// shorter is taken as silent after its end) through a Live transcription,
// as a meeting would have heard them, and returns the merged words.
func TranscribeChannels(ctx context.Context, tr [am.Channels]whisper.WindowTranscriber, chs [am.Channels][]float32, cfg LiveConfig) ([]Word, error) {
	l := NewLive(tr, cfg)
	n := max(len(chs[0]), len(chs[1]))
	const step = rate16k / 10
	frames := make([]float32, 0, am.Channels*step)
	for off := 0; off < n; off += step {
		frames = frames[:0]
		for j := off; j < min(off+step, n); j++ {
			for _, x := range chs {
				v := float32(0)
				if j < len(x) {
					v = x[j]
				}
				frames = append(frames, v)
			}
		}
		if err := l.Write(ctx, frames); err != nil {
			return nil, err
		}
	}
	return l.Finish(ctx)
}

// Skip advances the timeline over n frames the transcriber will not get
// (dropped because it fell behind): gates close, later words keep their
// true times.
func (l *Live) Skip(n int64) {
	l.pos += n
	for _, c := range l.ch {
		c.open, c.hist = false, c.hist[:0]
	}
}
