package vad

import "time"

// Detector follows a live stream frame by frame. It tracks the noise floor
// as it goes (fast down, slowly up, so speech does not raise it), which is
// why a recording that starts with a little room tone (the recorder's
// pre-roll) is detected best. Not safe for concurrent use.
type Detector struct {
	cfg     Config
	a       *analyser
	pend    []float32
	floor   float64
	started bool

	run      int // consecutive speech frames
	speaking bool
	seen     bool
	quiet    int // frames since the last speech frame, once seen
}

// NewDetector makes a streaming detector.
func NewDetector(cfg Config) *Detector {
	cfg = cfg.withDefaults()
	return &Detector{cfg: cfg, a: newAnalyser(cfg)}
}

// floorRise is how fast the floor creeps up per frame (dB), about
// 2.5 dB/s at 20 ms frames: slow next to speech, quick next to a fan that
// was just switched on.
const floorRise = 0.05

// Write feeds samples; they need not be whole frames.
func (d *Detector) Write(x []float32) {
	fl := d.cfg.frameLen()
	d.pend = append(d.pend, x...)
	n := 0
	for ; n+fl <= len(d.pend); n += fl {
		d.frame(d.pend[n : n+fl])
	}
	d.pend = d.pend[:copy(d.pend, d.pend[n:])]
}

func (d *Detector) frame(x []float32) {
	e := energyDB(x)
	if !d.started {
		d.floor, d.started = max(e, d.cfg.MinLevelDB), true
	}
	sp := d.a.isSpeech(x, e, d.floor)
	if e < d.floor {
		// Not below MinLevelDB: see Trim.
		d.floor = max(e, d.cfg.MinLevelDB)
	} else if !sp {
		d.floor += min(floorRise, e-d.floor)
	}
	if sp {
		d.run++
		if d.run >= d.cfg.frames(d.cfg.MinSpeechMs) {
			d.speaking, d.seen, d.quiet = true, true, 0
		}
		return
	}
	d.run = 0
	if d.seen {
		d.quiet++
		if d.quiet > d.cfg.frames(d.cfg.HangoverMs) {
			d.speaking = false
		}
	}
}

// Speaking reports whether speech is going on now (with the hangover).
func (d *Detector) Speaking() bool { return d.speaking }

// SpeechSeen reports whether any speech has been detected yet.
func (d *Detector) SpeechSeen() bool { return d.seen }

// Silence is how long it has been quiet since the last speech (0 before
// any speech): a toggle-mode recording ends when it passes the user's
// pause.
func (d *Detector) Silence() time.Duration {
	if !d.seen {
		return 0
	}
	return time.Duration(d.quiet*d.cfg.FrameMs) * time.Millisecond
}

// EndOfSpeech reports whether speech was seen and has been followed by at
// least pause of silence.
func (d *Detector) EndOfSpeech(pause time.Duration) bool {
	return d.seen && d.Silence() >= pause
}
