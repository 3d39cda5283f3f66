package channels

import (
	"sort"
	"time"

	"github.com/harkapp/hark/audio/vad"
	"github.com/harkapp/hark/engine/whisper"
)

// The voice-activity gate of one channel: only speech (with a little
// pre-roll, and for a while after it) gets through, and none of what is
// the other channel's echo, so silence costs no decoding and the call is
// not transcribed twice. A meeting's live transcript and every pass over a
// recording (Gated) gate alike; the audio let through is concatenated,
// and its spans map it back to the recording's timeline.

const (
	rate16k = whisper.SampleRate
	// preRoll is the audio before the detector's onset that the gate lets
	// through: the detector needs a few frames to be sure.
	preRoll = rate16k * 3 / 10
	// history is the audio kept per channel for the pre-roll and the
	// echo comparison (the window plus the longest echo delay).
	history = rate16k * 3 / 2
	// Chunk is the step the gate decides on (20 ms of 16 kHz audio).
	Chunk = rate16k / 50
)

// GateConfig tunes a gate; zero values take the defaults.
type GateConfig struct {
	// VAD tunes the voice-activity detector.
	VAD vad.Config
	// Echo tunes echo detection.
	Echo EchoConfig
	// Pause is the silence that ends an utterance for the transcriber
	// behind the gate (default 800 ms, whisper.StreamConfig's): the gate
	// stays open for it and a little more, so the transcriber sees the
	// utterance end.
	Pause time.Duration
}

// span maps audio let through back to the timeline: the let-through
// sample fed is the timeline's sample at.
type span struct{ fed, at int64 }

// Gate is one channel's gate. Feed every channel's chunk to its gate
// (Hear) before any gate decides (Pass): the echo check compares the
// channels' same moments.
type Gate struct {
	det     *vad.Detector
	echo    EchoConfig
	hang    int64 // quiet samples after which the gate closes
	hist    []float32
	open    bool
	quiet   int64 // samples since the gate last heard (non-echo) speech
	fed     int64 // samples let through
	spans   []span
	skipped int64 // speech samples held back as echo
}

// NewGate makes a closed gate.
func NewGate(cfg GateConfig) *Gate {
	pause := cfg.Pause
	if pause <= 0 {
		pause = 800 * time.Millisecond
	}
	return &Gate{det: vad.NewDetector(cfg.VAD), echo: cfg.Echo, hang: int64(pause.Seconds()*rate16k) + rate16k/5}
}

// Hear takes the channel's next chunk (16 kHz, at most Chunk samples).
func (g *Gate) Hear(x []float32) {
	g.det.Write(x)
	g.hist = append(g.hist, x...)
	if over := len(g.hist) - history; over > 0 {
		g.hist = g.hist[:copy(g.hist, g.hist[over:])]
	}
}

// Pass returns what of the chunk x just heard (and of the audio before it)
// gets through, appended to dst; other is the other channel's gate, and
// at is x's place on the timeline (samples).
func (g *Gate) Pass(dst []float32, other *Gate, x []float32, at int64) []float32 {
	speech := g.det.Speaking()
	if speech {
		if echo, _ := IsEcho(g.hist, other.hist, g.echo); echo {
			// What this channel hears now is the other side: close at once.
			g.skipped += int64(len(x))
			g.open = false
			return dst
		}
		g.quiet = 0
	} else {
		g.quiet += int64(len(x))
	}
	if !g.open {
		if !speech {
			return dst
		}
		// Open with the pre-roll that came before this chunk.
		pre := g.hist[:len(g.hist)-len(x)]
		pre = pre[max(0, len(pre)-preRoll):]
		g.open = true
		g.spans = append(g.spans, span{fed: g.fed, at: at - int64(len(pre))})
		g.fed += int64(len(pre))
		dst = append(dst, pre...)
	}
	if g.quiet > g.hang {
		g.open = false
		return dst
	}
	g.fed += int64(len(x))
	return append(dst, x...)
}

// Open reports whether the gate lets the channel through now.
func (g *Gate) Open() bool { return g.open }

// Reset closes the gate and forgets the audio before a gap in the
// timeline.
func (g *Gate) Reset() { g.open, g.hist = false, g.hist[:0] }

// Timeline maps a time in the audio let through (seconds) to the
// timeline's.
func (g *Gate) Timeline(t float64) float64 {
	s := int64(t * rate16k)
	i := sort.Search(len(g.spans), func(i int) bool { return g.spans[i].fed > s }) - 1
	if i < 0 {
		return t
	}
	return float64(g.spans[i].at+s-g.spans[i].fed) / rate16k
}

// Skipped is the speech held back as the other channel's echo (seconds).
func (g *Gate) Skipped() float64 { return float64(g.skipped) / rate16k }
