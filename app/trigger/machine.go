package trigger

import (
	"fmt"
	"time"
)

// Modes: push-to-talk records while the key is held; toggle starts on one
// tap and stops on the next.
const (
	ModePush   = "push"
	ModeToggle = "toggle"
)

// Default timings. A press shorter than Tap is a tap (it counts towards a
// double tap and, in push mode, never records); a longer one is a hold.
// Push-to-talk therefore starts Tap after the press: the recorder's
// pre-roll (500 ms) keeps what was said in that time.
const (
	DefaultTap = 250 * time.Millisecond
	DefaultGap = 400 * time.Millisecond
)

// Config chooses the trigger's behaviour.
type Config struct {
	Mode string // ModePush or ModeToggle
	// DoubleTap: two quick taps start hands-free recording, which the
	// next tap stops. In toggle mode it replaces the single tap (a lone
	// tap of Right Ctrl does nothing); in push mode holding still talks.
	DoubleTap bool
	Tap       time.Duration // longest tap; 0 = DefaultTap
	Gap       time.Duration // longest pause between a double tap's taps; 0 = DefaultGap
}

// Input is one observed event. Key is the trigger key, or "" for any
// other key or button (only its presses matter: they spoil a trigger
// press). At is a monotonic time; only differences matter.
type Input struct {
	At   time.Duration
	Key  Key
	Down bool
}

// Action is what the machine asks of dictation.
type Action int

// Actions.
const (
	Start  Action = iota + 1
	Stop          // stop and transcribe
	Cancel        // stop and discard: the key turned out to be a modifier
)

func (a Action) String() string {
	switch a {
	case Start:
		return "start"
	case Stop:
		return "stop"
	case Cancel:
		return "cancel"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// recording states, as the machine knows them.
const (
	idle    = iota
	holding // push-to-talk: stops when the key goes up
	latched // hands-free: stops on the next clean press
)

// Machine is the trigger's state machine. It is not safe for concurrent
// use; Runner drives one from a single goroutine. Time advances only
// through the At of Inputs and the now of Advance, so recorded streams
// replay exactly.
type Machine struct {
	cfg Config
	key Key

	down    bool          // the trigger key is held
	downAt  time.Duration // when it went down
	clean   bool          // no other key or button since it went down
	stopper bool          // this press will stop a latched recording
	held    bool          // this press has already started push-to-talk
	rec     int           // idle, holding or latched

	tapped bool          // a clean tap just ended: the first of a double tap
	tapAt  time.Duration // when that tap ended
}

// New returns a machine for key with cfg, checking cfg.
func New(key Key, cfg Config) (*Machine, error) {
	if cfg.Mode != ModePush && cfg.Mode != ModeToggle {
		return nil, fmt.Errorf("trigger mode %q is not %q or %q", cfg.Mode, ModePush, ModeToggle)
	}
	if _, err := ParseKey(string(key)); err != nil {
		return nil, err
	}
	if cfg.Tap <= 0 {
		cfg.Tap = DefaultTap
	}
	if cfg.Gap <= 0 {
		cfg.Gap = DefaultGap
	}
	return &Machine{cfg: cfg, key: key}, nil
}

// Sync tells the machine whether dictation is recording now: a recording
// stopped elsewhere (the window, auto-stop) is forgotten, and one started
// elsewhere can be stopped with a tap.
func (m *Machine) Sync(recording bool) {
	switch {
	case !recording:
		m.rec = idle
	case m.rec == idle:
		m.rec = latched
		m.stopper = false
	}
}

// Deadline reports when Advance has something to do: push-to-talk
// starting once a clean press has lasted a tap's length.
func (m *Machine) Deadline() (time.Duration, bool) {
	if m.cfg.Mode == ModePush && m.down && m.clean && !m.stopper && !m.held && m.rec == idle {
		return m.downAt + m.cfg.Tap, true
	}
	return 0, false
}

// Advance moves time to now, returning the actions that fall due.
func (m *Machine) Advance(now time.Duration) []Action {
	if at, ok := m.Deadline(); ok && now >= at {
		m.rec, m.held = holding, true
		return []Action{Start}
	}
	return nil
}

// Step feeds one input (after advancing time to its At) and returns the
// actions it causes, in order.
func (m *Machine) Step(in Input) []Action {
	acts := m.Advance(in.At)
	switch {
	case in.Key != m.key:
		if in.Down {
			acts = append(acts, m.other()...)
		}
	case in.Down:
		m.press(in.At)
	default:
		acts = append(acts, m.release(in.At)...)
	}
	return acts
}

// other: another key or button went down. A held trigger key is being
// used as a modifier; a push-to-talk recording it started is discarded.
func (m *Machine) other() []Action {
	m.tapped = false
	if !m.down {
		return nil
	}
	m.clean = false
	if m.rec == holding {
		m.rec = idle
		return []Action{Cancel}
	}
	return nil
}

func (m *Machine) press(at time.Duration) {
	if m.down {
		return // auto-repeat
	}
	m.down, m.downAt, m.clean, m.held = true, at, true, false
	m.stopper = m.rec == latched
	if m.tapped && at-m.tapAt > m.cfg.Gap {
		m.tapped = false
	}
}

func (m *Machine) release(at time.Duration) []Action {
	if !m.down {
		return nil // a release whose press came before we watched
	}
	m.down = false
	tap := m.clean && at-m.downAt < m.cfg.Tap
	second := tap && m.tapped
	m.tapped = false
	switch {
	case m.rec == holding:
		m.rec = idle
		return []Action{Stop}
	case !m.clean:
		return nil
	case m.stopper:
		m.rec = idle
		return []Action{Stop}
	case m.rec != idle:
		return nil
	case m.cfg.DoubleTap && second:
		m.rec = latched
		return []Action{Start}
	case m.cfg.DoubleTap:
		m.tapped, m.tapAt = tap, at
		return nil
	case m.cfg.Mode == ModeToggle:
		m.rec = latched
		return []Action{Start}
	}
	return nil // push mode: a tap too short to talk
}
