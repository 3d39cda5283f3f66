package meeting

import (
	"context"
	"sync/atomic"

	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/audio/vad"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/channels"
)

// LiveConfig configures a Live transcription.
type LiveConfig struct {
	// Stream tunes each channel's streaming transcriber.
	Stream whisper.StreamConfig
	// VAD tunes the voice-activity gate.
	VAD vad.Config
	// Echo tunes echo detection.
	Echo channels.EchoConfig
	// OnWords gets each channel's newly committed words.
	OnWords func(words []channels.Word)
	// OnHeard gets how far into the meeting the live transcription has
	// taken its audio (seconds), each time that passes a whole second: a
	// transcriber that falls behind can be shown catching up.
	OnHeard func(seconds float64)
}

const rate16k = whisper.SampleRate

type channel struct {
	*channels.Gate
	id    int
	st    *whisper.Streamer
	queue []float32 // audio let through, not yet written to the transcriber
	words int       // committed words handed on
	fresh bool
}

// Live transcribes a meeting's two channels as the frames arrive: a voice
// activity gate lets only speech (with a little pre-roll) through to each
// channel's streaming transcriber, so silence costs nothing; speech that
// is the other channel's echo is not transcribed; committed words come
// out on the timeline with their speaker. Not safe for concurrent use:
// one goroutine writes (decoding runs inside Write).
//
// The gated audio reaches the transcribers once per Write, or every
// catchUp of it: a writer that keeps up writes a capture period at a time
// and the transcribers decode every StreamConfig.Step as usual, while one
// that fell behind (a busy machine) writes its whole backlog at once, and
// the transcribers then decode once per catchUp (and at each pause)
// instead of once a second, so the live transcript catches up.
type Live struct {
	cfg   LiveConfig
	ch    [am.Channels]*channel
	pos   int64        // timeline samples seen
	heard atomic.Int64 // timeline samples transcribed, for any goroutine
}

// catchUp is the most gated audio a channel queues before its transcriber
// gets it (5 s: with StreamConfig.MaxWindow's 20 s, a window stays under
// Whisper's 30 s).
const catchUp = 5 * rate16k

// NewLive makes a live transcription over one window transcriber per
// channel (they may share a model only if the caller serialises them;
// Live calls them from its one goroutine).
func NewLive(tr [am.Channels]whisper.WindowTranscriber, cfg LiveConfig) *Live {
	l := &Live{cfg: cfg}
	for i := range l.ch {
		// The gate stays open past the transcriber's own pause, so that it
		// sees the utterance end and commits it.
		c := &channel{id: i, Gate: channels.NewGate(channels.GateConfig{VAD: cfg.VAD, Echo: cfg.Echo, Pause: cfg.Stream.Pause})}
		c.st = whisper.NewStreamer(tr[i], cfg.Stream, func(e whisper.StreamEvent) {
			if e.Type == whisper.EventCommitted {
				c.fresh = true
			}
		})
		l.ch[i] = c
	}
	return l
}

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
	for off := 0; off < n; off += channels.Chunk {
		end := min(off+channels.Chunk, n)
		for i, c := range l.ch {
			c.Hear(x[i][off:end])
		}
		full := false
		for i, c := range l.ch {
			open, skipped := c.Open(), c.Skipped()
			c.queue = c.Pass(c.queue, l.ch[1-i].Gate, x[i][off:end], l.pos)
			if open && c.Skipped() > skipped {
				if err := c.cut(ctx); err != nil {
					return err
				}
			}
			full = full || len(c.queue) >= catchUp
		}
		l.pos += int64(end - off)
		if full {
			if err := l.flush(ctx); err != nil {
				return err
			}
		}
	}
	return l.flush(ctx)
}

// flush writes each channel's queued audio to its transcriber, hands on
// what they committed (at once: a long backlog must not hold back the
// words decoded early in it), and moves Heard up to the timeline.
func (l *Live) flush(ctx context.Context) error {
	for _, c := range l.ch {
		if len(c.queue) == 0 {
			continue
		}
		err := c.st.Write(ctx, c.queue)
		c.queue = c.queue[:0]
		if err != nil {
			return err
		}
	}
	l.handOn()
	l.hear()
	return nil
}

// cut ends the channel's utterance where its gate closed on the other
// side's echo: the speech before it was cut off short of the pause the
// transcriber commits at, and its words would wait for the next speech.
func (c *channel) cut(ctx context.Context) error {
	if len(c.queue) > 0 {
		err := c.st.Write(ctx, c.queue)
		c.queue = c.queue[:0]
		if err != nil {
			return err
		}
	}
	return c.st.EndUtterance(ctx)
}

// hear publishes the timeline as transcribed and tells OnHeard when it
// passes a whole second.
func (l *Live) hear() {
	if before := l.heard.Swap(l.pos); l.cfg.OnHeard != nil && l.pos/rate16k != before/rate16k {
		l.cfg.OnHeard(l.Heard())
	}
}

// Heard is how far into the meeting the live transcription has
// transcribed, in seconds; safe from any goroutine.
func (l *Live) Heard() float64 { return float64(l.heard.Load()) / rate16k }

// handOn gives OnWords what each channel committed since last time.
func (l *Live) handOn() {
	for _, c := range l.ch {
		if !c.fresh {
			continue
		}
		c.fresh = false
		res := c.st.Result()
		if ws := channels.ResultWords(res, c.id, c.words, c.Timeline); len(ws) > 0 && l.cfg.OnWords != nil {
			l.cfg.OnWords(ws)
		}
		c.words = channels.CountWords(res)
	}
}

// Decodes counts each channel's window decodes (silence costs none).
func (l *Live) Decodes() [am.Channels]int {
	return [am.Channels]int{l.ch[0].st.Decodes(), l.ch[1].st.Decodes()}
}

// Skipped is the speech on each channel not transcribed as echo, in
// seconds.
func (l *Live) Skipped() [am.Channels]float64 {
	return [am.Channels]float64{l.ch[0].Skipped(), l.ch[1].Skipped()}
}

// Finish decodes both channels' tails and returns every word, merged by
// time.
func (l *Live) Finish(ctx context.Context) ([]channels.Word, error) {
	var all []channels.Word
	for _, c := range l.ch {
		res, err := c.st.Finish(ctx)
		if err != nil {
			return nil, err
		}
		c.fresh = true
		all = append(all, channels.ResultWords(res, c.id, 0, c.Timeline)...)
	}
	l.handOn()
	return channels.MergeWords(all), nil
}

// Skip advances the timeline over n frames the transcriber will not get
// (dropped because it fell behind): gates close, later words keep their
// true times.
func (l *Live) Skip(n int64) {
	l.pos += n
	l.hear() // nothing is queued: every Write flushes
	for _, c := range l.ch {
		c.Reset()
	}
}
