// Package meeting captures a meeting: the microphone ("You") and the
// system audio ("Others", the default sink's monitor) as two channels on
// one clock.
//
// Two capture devices run on two hardware clocks and a monitor source
// delivers nothing at all while nothing plays, so their sample counts do
// not line up by themselves. The Aligner puts both on the wall clock: a
// channel that fell silent is filled with zeros, and a channel whose clock
// runs fast or slow is corrected by dropping or interpolating single
// samples (at most one in 200, inaudible to a listener and to Whisper).
//
// A loaded machine holds a capture thread up for a while and then lets it
// deliver everything it missed at once. The wall clock alone cannot tell
// that from a device that stopped: a delivery that comes late is put on
// the timeline by the device's own frame count once its burst is over
// (the newest sample is "now", the rest contiguous before it), and zeros
// go in only for time the device really did not cover.
package meeting

import (
	"math"
	"time"

	"github.com/harkapp/hark/internal/speakers"
)

// Channel indexes: interleaved frames are {You, Others}.
const (
	You      = speakers.You    // the microphone
	Others   = speakers.Others // the system audio
	Channels = speakers.Count
)

// Names are the speaker labels of the channels.
var Names = speakers.Names

// AlignConfig tunes an Aligner; zero values take the defaults.
type AlignConfig struct {
	Rate int // samples a second (default 16000)
	// Tolerance is the lag within which a channel is left alone (default
	// 10 ms, well within what speaker attribution and echo detection
	// need; tighter, a loaded machine's scheduling noise is "corrected"
	// back and forth): beyond it, samples are dropped or interpolated.
	Tolerance time.Duration
	// Gap is the lag beyond which a channel is taken to have delivered
	// nothing (a silent monitor, a device being reopened) and zeros are
	// inserted at once (default 100 ms).
	Gap time.Duration
	// Stall is how far a channel that delivers nothing may fall behind
	// the other before it is filled with zeros, so the other's audio is
	// not held back (default 500 ms).
	Stall time.Duration
	// StallActive replaces Stall for a channel that delivered within the
	// last StallActive (default 1.5 s): on a loaded machine a device's
	// callbacks come hundreds of milliseconds late and then all at once,
	// and zeros put in for them would cut into its speech and shift the
	// rest of it (seen under CI load: a sentence split by silence). A
	// channel that has stopped (a monitor while nothing plays) is filled
	// after Stall again once it has been quiet for StallActive.
	StallActive time.Duration
	// Window is how long the lag's floor is taken over: callbacks arrive
	// late by scheduling jitter, never early (default 1 s).
	Window time.Duration
	// Settle: a channel whose delivery comes more than Gap late (or after
	// zeros went in for it) is held until its deliveries have stopped
	// catching up for Settle (default 200 ms), and then placed by its
	// frame count: a starved capture thread's backlog comes as a burst of
	// periods, each one catching up, and only what the burst does not
	// cover is a gap. A burst is placed after SettleMax (default 1 s:
	// a backlog drains in milliseconds of CPU) whatever it does, so a
	// recording killed meanwhile loses little.
	Settle, SettleMax time.Duration
}

func (c AlignConfig) withDefaults() AlignConfig {
	if c.Rate <= 0 {
		c.Rate = 16000
	}
	if c.Tolerance <= 0 {
		c.Tolerance = 10 * time.Millisecond
	}
	if c.Gap <= 0 {
		c.Gap = 100 * time.Millisecond
	}
	if c.Stall <= 0 {
		c.Stall = 500 * time.Millisecond
	}
	if c.StallActive <= 0 {
		c.StallActive = 1500 * time.Millisecond
	}
	c.StallActive = max(c.StallActive, c.Stall)
	if c.Window <= 0 {
		c.Window = time.Second
	}
	if c.Settle <= 0 {
		c.Settle = 200 * time.Millisecond
	}
	if c.SettleMax <= 0 {
		c.SettleMax = time.Second
	}
	c.SettleMax = max(c.SettleMax, c.Settle)
	return c
}

// maxStep is the largest share of samples dropped or interpolated to
// correct drift.
const maxStep = 1.0 / 200

// TrackStats describes one channel's corrections.
type TrackStats struct {
	Received int64 `json:"received"` // samples delivered by the device
	Filled   int64 `json:"filled"`   // zeros inserted for gaps
	Stretch  int64 `json:"stretch"`  // samples interpolated (a slow clock)
	Dropped  int64 `json:"dropped"`  // samples dropped (a fast clock)
	// Late is samples dropped because they came after zeros had been
	// handed on in their place (a device held up beyond StallActive).
	Late int64 `json:"late,omitempty"`
	// MaxGapMs is the longest wait between two deliveries.
	MaxGapMs float64 `json:"max_gap_ms,omitempty"`
	// LagMs is the channel's last measured lag behind the wall clock,
	// beyond its device's own latency.
	LagMs float64 `json:"lag_ms"`
}

// DriftPPM is the clock error the corrections amount to, in parts per
// million of the samples received (positive: the device runs fast).
func (s TrackStats) DriftPPM() float64 {
	if s.Received == 0 {
		return 0
	}
	return float64(s.Dropped-s.Stretch) / float64(s.Received) * 1e6
}

type track struct {
	in, fix  int64 // samples received; inserted minus dropped
	q        []float32
	floor    [2]float64 // lag minima of the previous and current window
	window   int64
	from     int64   // the window of the first data
	base     float64 // the device's latency (samples), once measured
	based    bool
	acc      float64
	last     float32
	stats    TrackStats
	received bool
	lastE    float64 // the wall clock (samples) of the last delivery
	// zeros put in by the other channel's stall rule since the last
	// delivery (a late burst's first samples belong in their place)
	stalled int64
	// A delivery that came late is held in pend until its burst is over.
	settling            bool
	pend                []float32
	settleFrom, settleE float64 // when the burst began; when it last caught up
	settleMin, mark     float64 // its least lag (beyond base); at settleE
}

// Aligner puts two channels on one clock. It is not safe for concurrent
// use: the caller serialises Push and Frames.
type Aligner struct {
	cfg                                 AlignConfig
	t0                                  time.Time
	tol, gap, stall, stallActive, rateF float64
	settle, settleMax                   float64
	tr                                  [Channels]track
}

// NewAligner starts the timeline at start (when recording began).
func NewAligner(start time.Time, cfg AlignConfig) *Aligner {
	cfg = cfg.withDefaults()
	r := float64(cfg.Rate)
	a := &Aligner{cfg: cfg, t0: start, rateF: r,
		tol: cfg.Tolerance.Seconds() * r, gap: cfg.Gap.Seconds() * r, stall: cfg.Stall.Seconds() * r,
		stallActive: cfg.StallActive.Seconds() * r, settle: cfg.Settle.Seconds() * r, settleMax: cfg.SettleMax.Seconds() * r}
	for i := range a.tr {
		a.tr[i].floor = [2]float64{math.Inf(1), math.Inf(1)}
		a.tr[i].window, a.tr[i].from = -1, -1
	}
	return a
}

// expected is how many samples the wall clock says exist at now.
func (a *Aligner) expected(now time.Time) float64 {
	return now.Sub(a.t0).Seconds() * a.rateF
}

// Push adds a period captured on channel ch that arrived at now (the end
// of x is the newest audio).
func (a *Aligner) Push(ch int, x []float32, now time.Time) {
	t := &a.tr[ch]
	e := a.expected(now)
	if t.received {
		t.stats.MaxGapMs = max(t.stats.MaxGapMs, (e-t.lastE)/a.rateF*1000)
	}
	t.in += int64(len(x))
	t.stats.Received += int64(len(x))
	t.received = true
	t.lastE = e
	lag := e - float64(t.in+t.fix)
	// The floor over the last one to two windows: jitter only delays.
	if w := int64(now.Sub(a.t0) / a.cfg.Window); w != t.window {
		if w == t.window+1 {
			t.floor[0] = t.floor[1]
			if !t.based && t.window > t.from {
				// The first whole window of data: the device's own
				// latency, which is not drift.
				t.base, t.based = t.floor[0], true
			}
		} else {
			t.floor[0] = math.Inf(1)
		}
		if t.from < 0 {
			t.from = w
		}
		t.floor[1], t.window = lag, w
	} else {
		t.floor[1] = min(t.floor[1], lag)
	}
	rel := min(t.floor[0], t.floor[1]) - t.base
	t.stats.LagMs = rel / a.rateF * 1000
	// This delivery's own lag: late by more than Gap, or after zeros
	// went in for it, it may be the start of a burst.
	cur := lag - t.base
	if !t.settling && (cur > a.gap || t.stalled > 0) {
		t.settling, t.settleFrom, t.settleE = true, e, e
		t.settleMin, t.mark = cur, cur
	}
	switch {
	case t.settling:
		t.pend = append(t.pend, x...)
		t.settleMin = min(t.settleMin, cur)
		if cur < t.mark-a.tol/2 { // still catching up
			t.mark, t.settleE = cur, e
		}
		if e-t.settleE >= a.settle || e-t.settleFrom >= a.settleMax {
			a.place(t)
		}
	case rel > a.gap:
		a.fill(t, int64(rel))
		t.append(x, 0, 0)
	case t.based && rel > a.tol:
		t.append(x, int64(rel), +1)
	case t.based && rel < -a.tol:
		t.append(x, int64(-rel), -1)
	default:
		t.append(x, 0, 0)
	}
	// A channel that delivers nothing must not hold the other back. A
	// channel in a burst does not judge the other: the whole process may
	// have been held up, and the other's burst may come next.
	if t.settling {
		return
	}
	for i := range a.tr {
		o := &a.tr[i]
		if i == ch {
			continue
		}
		if o.settling {
			if e-o.settleE < a.settle {
				continue // its burst is still coming in
			}
			a.place(o)
		}
		limit := a.stall
		if o.received && e-o.lastE < a.stallActive {
			limit = a.stallActive // late, not stopped (yet)
		}
		if behind := e - float64(o.in+o.fix) - o.base; behind > limit {
			a.fill(o, int64(behind))
			o.stalled += int64(behind)
		}
	}
}

// place puts a settled burst on t's timeline by its frame count: its
// newest sample at its least lag. Time the burst does not reach back to
// is a gap (zeros before it); samples that reach back over zeros already
// put in for the stall are late, and dropped.
func (a *Aligner) place(t *track) {
	g := t.settleMin
	switch {
	case g > a.gap:
		a.fill(t, int64(g))
	case g < -a.tol && t.stalled > 0:
		d := min(int64(-g), t.stalled, int64(len(t.pend)))
		t.pend = t.pend[d:]
		t.fix -= d
		t.floor[0] += float64(d)
		t.floor[1] += float64(d)
		t.stats.Late += d
	}
	t.append(t.pend, 0, 0)
	t.pend = t.pend[:0]
	t.settling, t.stalled = false, 0
}

// fill inserts n zeros on t's timeline.
func (a *Aligner) fill(t *track, n int64) {
	if n <= 0 {
		return
	}
	t.q = append(t.q, make([]float32, n)...)
	t.fix += n
	t.stats.Filled += n
	t.floor[0] -= float64(n)
	t.floor[1] -= float64(n)
	t.last = 0
}

// append queues x, interpolating (dir +1) or dropping (dir -1) up to need
// samples at no more than one in 1/maxStep.
func (t *track) append(x []float32, need int64, dir int) {
	done := int64(0)
	for _, v := range x {
		if done < need {
			t.acc += maxStep
		}
		if t.acc >= 1 && done < need {
			t.acc--
			done++
			if dir < 0 {
				t.last = v
				continue // dropped
			}
			t.q = append(t.q, (t.last+v)/2) // interpolated
		}
		t.q = append(t.q, v)
		t.last = v
	}
	c := done * int64(dir)
	t.fix += c
	t.floor[0] -= float64(c)
	t.floor[1] -= float64(c)
	if dir > 0 {
		t.stats.Stretch += done
	} else if dir < 0 {
		t.stats.Dropped += done
	}
}

// Frames appends the frames both channels have reached to dst,
// interleaved {You, Others}, and returns it.
func (a *Aligner) Frames(dst []float32) []float32 {
	n := len(a.tr[0].q)
	for i := 1; i < Channels; i++ {
		n = min(n, len(a.tr[i].q))
	}
	for j := range n {
		for i := range a.tr {
			dst = append(dst, a.tr[i].q[j])
		}
	}
	for i := range a.tr {
		t := &a.tr[i]
		t.q = t.q[:copy(t.q, t.q[n:])]
	}
	return dst
}

// Flush fills every channel to the longest one and returns the rest of
// the frames (at the end of a recording).
func (a *Aligner) Flush(dst []float32) []float32 {
	for i := range a.tr {
		if a.tr[i].settling {
			a.place(&a.tr[i])
		}
	}
	n := 0
	for i := range a.tr {
		n = max(n, len(a.tr[i].q))
	}
	for i := range a.tr {
		a.tr[i].q = append(a.tr[i].q, make([]float32, n-len(a.tr[i].q))...)
	}
	return a.Frames(dst)
}

// Pending is how many samples wait on the channel furthest ahead (a
// burst being settled included).
func (a *Aligner) Pending() int {
	n := 0
	for i := range a.tr {
		n = max(n, len(a.tr[i].q)+len(a.tr[i].pend))
	}
	return n
}

// Stats reports each channel's corrections.
func (a *Aligner) Stats() [Channels]TrackStats {
	var s [Channels]TrackStats
	for i := range a.tr {
		s[i] = a.tr[i].stats
	}
	return s
}
