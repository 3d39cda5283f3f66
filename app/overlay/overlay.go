// Package overlay is the recording overlay: a small native panel, always
// on top and never taking focus, shown while dictating (the user looks at
// the app they type into, not at Hark's window). It shows the state
// (starting / listening / finishing / inserted / error), the mode, the
// elapsed time, a level meter and the streamed text (committed in full
// colour, the tentative tail dimmed); Esc, grabbed globally only while
// recording, cancels; a click stops; it fades after insertion.
//
// The panel is a GTK popup on Linux (overlay_linux.go) and an NSPanel on
// macOS (overlay_darwin.go); this file turns the app's dictation events
// into what the panel shows. It sits at the bottom centre of the active
// screen, or just below the text cursor (a setting: caret.go).
package overlay

import (
	"fmt"
	"html"
	"log"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/app"
	"github.com/harkapp/hark/internal/place"
)

// Phases the panel shows.
const (
	Starting  = "starting…"
	Listening = "listening"
	Finishing = "finishing…"
	Inserted  = "inserted"
	Canceled  = "canceled"
	Failed    = "error"
	Improved  = "improved" // "type now, perfect later" replaced the text
	Better    = "better text ready"
	Copied    = "copied"
)

// Frame is what the panel shows at one moment.
type Frame struct {
	Visible   bool
	Opacity   float64 // 0..1, for the fade
	Header    string  // "● listening · Email · 0:07"
	Level     float64 // 0..1 on a dB scale
	Committed string
	Tentative string
	Note      string // a device change, an error
	// Caret is the text cursor the panel goes below (top-left-origin
	// screen coordinates); nil: the bottom centre of the active screen.
	Caret *place.Rect
}

// Markup is the text as Pango markup (GTK): committed text in full
// colour, the tentative tail dimmed, a note in italics.
func (f Frame) Markup() string {
	var b strings.Builder
	b.WriteString(html.EscapeString(f.Committed))
	if f.Tentative != "" {
		fmt.Fprintf(&b, `<span alpha="50%%">%s</span>`, html.EscapeString(f.Tentative))
	}
	if f.Note != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "<i>%s</i>", html.EscapeString(f.Note))
	}
	return b.String()
}

// view is the native panel.
type view interface {
	show(Frame)
	close()
}

// Hotkey grabs a key globally (platform.Hotkey): Esc while recording.
type Hotkey interface {
	Register(spec string, down, up func()) error
	Unregister() error
}

// Options connect the overlay to the app.
type Options struct {
	OnStop   func() // a click on the panel
	OnCancel func() // Esc while recording
	// Esc is the hotkey Esc is grabbed with while recording (nil: none).
	Esc Hotkey
	// Position is where the panel appears: app.OverlayBottom (also "") or
	// app.OverlayCaret; "settings:changed" events change it.
	Position string
	// Caret finds the focused app's text cursor (nil: the platform's
	// accessibility lookup, caret_linux.go and caret_darwin.go).
	Caret Locator
	// Logf is where the overlay says what the user should know (nil:
	// log.Printf).
	Logf func(format string, args ...any)
}

// fadeAfter is how long the final state stays before the panel fades.
// offerFor is how long an offered better text stays up (its hotkey keeps
// working after the panel fades; the Dictation view keeps the offer too).
const (
	offerFor  = 8 * time.Second
	fadeAfter = 900 * time.Millisecond
	fadeSteps = 8
	fadeStep  = 40 * time.Millisecond
)

// Overlay follows the dictation events and drives the panel.
type Overlay struct {
	v   view
	opt Options

	mu       sync.Mutex
	f        Frame
	phase    string
	mode     string
	started  time.Time
	heard    bool // a sample with sound arrived: listening
	grabbed  bool
	grabbing bool // a Register of Esc is under way, outside mu
	gen      int  // bumped by each state change: a stale fade stops
	ticking  bool
	closed   bool
	nowForTT func() time.Time

	position string
	caret    *place.Rect // where the last recording's text cursor was
	locating bool        // a caret lookup is under way: the panel waits for it
	lookups  int         // bumped by each lookup: a stale one is dropped
	warned   bool        // the fallback to the bottom centre was logged
}

func newOverlay(v view, opt Options) *Overlay {
	if opt.Logf == nil {
		opt.Logf = log.Printf
	}
	return &Overlay{v: v, opt: opt, nowForTT: time.Now, position: opt.Position}
}

// Handle takes an app event (the Emitter's name and data).
func (o *Overlay) Handle(name string, data any) {
	switch name {
	case "dictation:state":
		st, ok := data.(app.DictationStatus)
		if !ok {
			return
		}
		switch st.State {
		case app.DictRecording:
			o.recording(st)
		case app.DictTranscribing:
			o.set(func() { o.phase = Finishing; o.ungrab() })
		case app.DictIdle:
			if st.Error != "" {
				o.set(func() { o.phase, o.f.Note = Failed, st.Error; o.ungrab() })
				o.fadeLater()
			}
		}
	case "dictation:level":
		l, ok := data.(app.Level)
		if !ok {
			return
		}
		o.set(func() {
			o.f.Level = meter(l.RMS)
			if l.RMS > 0 && o.phase == Starting {
				o.phase, o.heard = Listening, true
			}
		})
	case "dictation:partial":
		p, ok := data.(app.PartialText)
		if !ok {
			return
		}
		o.set(func() { o.f.Committed, o.f.Tentative = streamed(p.Committed, p.Tentative) })
	case "dictation:warning":
		if m, ok := data.(app.Warning); ok {
			o.set(func() { o.f.Note = m.Message })
		}
	case "dictation:done":
		o.set(func() {
			o.phase = Inserted
			if it, ok := data.(app.Item); ok && it.Text != "" {
				o.f.Committed, o.f.Tentative = it.Text, ""
			}
			o.ungrab()
		})
		o.fadeLater()
	case "dictation:canceled":
		o.set(func() { o.phase, o.f.Tentative = Canceled, ""; o.ungrab() })
		o.fadeLater()
	case "dictation:better", "dictation:better-copied", "dictation:better-withdrawn":
		if bt, ok := data.(app.BetterText); ok {
			o.better(name, bt)
		}
	case app.EventSettingsChanged:
		if d, ok := data.(app.SettingsData); ok {
			o.mu.Lock()
			o.position = d.OverlayPosition
			o.mu.Unlock()
		}
	}
}

// better shows "type now, perfect later"'s result after a dictation: the
// text that replaced the inserted one, or the offer and the keystroke
// that copies it. A recording in progress keeps the panel.
func (o *Overlay) better(name string, bt app.BetterText) {
	stay, shown := fadeAfter, false
	o.set(func() {
		// Checked under the same lock as the change: a recording that
		// starts meanwhile keeps the panel.
		if o.phase == Starting || o.phase == Listening || o.phase == Finishing {
			return
		}
		shown = true
		o.f = Frame{Visible: true, Opacity: 1, Committed: bt.Text}
		o.mode, o.started = "", time.Time{}
		switch {
		case name == "dictation:better-copied":
			o.phase = Copied
		case name == "dictation:better-withdrawn":
			// A new dictation made the offer stale: hide it at once.
			o.phase, o.f = Copied, Frame{}
		case bt.Replaced:
			o.phase = Improved
		default:
			o.phase, stay = Better, offerFor
			if bt.Hotkey != "" {
				o.f.Note = "press " + bt.Hotkey + " to copy it"
			}
		}
	})
	if shown {
		o.fadeAfterDelay(stay)
	}
}

// streamed is the stream's text as the panel shows it: without the space
// Whisper puts before the first word.
func streamed(committed, tentative string) (string, string) {
	committed = strings.TrimLeft(committed, " ")
	if committed == "" {
		tentative = strings.TrimLeft(tentative, " ")
	}
	return committed, tentative
}

// recording shows the panel for a new recording and grabs Esc.
func (o *Overlay) recording(st app.DictationStatus) {
	o.set(func() {
		if o.phase == Starting || o.phase == Listening {
			return // a repeated state event of the same recording
		}
		o.f = Frame{Visible: true, Opacity: 1}
		o.phase, o.mode, o.heard = Starting, st.Mode, false
		o.started = o.nowForTT()
		if st.StartedAt > 0 {
			o.started = time.UnixMilli(st.StartedAt)
		}
		if !o.ticking {
			o.ticking = true
			go o.tick()
		}
		// A lookup still under way belongs to an earlier recording.
		o.caret, o.locating = nil, false
		o.lookups++
		if o.position == app.OverlayCaret && o.opt.Caret != nil {
			// The focus is still in the app being dictated into: where
			// its cursor is now is where the text goes.
			o.locating = true
			go o.locate(o.lookups)
		}
	})
	o.grab()
}

// grab takes Esc while a recording is on: Esc belongs to the user's apps
// the rest of the time. Register runs outside o.mu (the grab's callback
// takes it); grabbed is recorded under it, and a recording that ended
// meanwhile gives the grab straight back.
func (o *Overlay) grab() {
	o.mu.Lock()
	want := !o.closed && !o.grabbed && !o.grabbing && o.opt.Esc != nil && o.opt.OnCancel != nil &&
		(o.phase == Starting || o.phase == Listening)
	if want {
		o.grabbing = true
	}
	o.mu.Unlock()
	if !want {
		return
	}
	ok := o.opt.Esc.Register("Escape", o.opt.OnCancel, nil) == nil
	o.mu.Lock()
	o.grabbing = false
	live := !o.closed && (o.phase == Starting || o.phase == Listening)
	if ok && live {
		o.grabbed = true
	}
	o.mu.Unlock()
	if ok && !live {
		o.release(o.opt.Esc)
	}
}

// ungrab gives Esc back. Called with o.mu held.
func (o *Overlay) ungrab() {
	if o.grabbed {
		o.grabbed = false
		esc := o.opt.Esc
		go o.release(esc) // not under o.mu: the grab's callback may be waiting for it
	}
}

// release gives Esc back; a failure leaves the key grabbed, which the
// log tells.
func (o *Overlay) release(esc Hotkey) {
	if err := esc.Unregister(); err != nil {
		o.opt.Logf("overlay: releasing Esc: %v", err)
	}
}

// tick refreshes the elapsed time while recording.
func (o *Overlay) tick() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		o.mu.Lock()
		live := !o.closed && (o.phase == Starting || o.phase == Listening)
		if !live {
			o.ticking = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		o.set(func() {})
	}
}

// set changes the state under the lock and shows the new frame.
func (o *Overlay) set(f func()) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	before := o.phase
	f()
	if o.phase != before {
		o.gen++
	}
	if o.phase == "" {
		o.mu.Unlock()
		return
	}
	o.f.Header = o.header()
	o.f.Caret = o.caret
	fr := o.f
	wait := o.locating
	o.mu.Unlock()
	if !wait {
		o.v.show(fr)
	}
}

// header is the state line: phase, mode, elapsed time.
func (o *Overlay) header() string {
	parts := []string{"● " + o.phase}
	if o.mode != "" {
		parts = append(parts, o.mode)
	}
	if !o.started.IsZero() {
		d := o.nowForTT().Sub(o.started).Round(time.Second)
		parts = append(parts, fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60))
	}
	return strings.Join(parts, " · ")
}

// fadeLater fades the panel out after the final state has been seen,
// unless a new recording started meanwhile.
func (o *Overlay) fadeLater() { o.fadeAfterDelay(fadeAfter) }

// fadeAfterDelay fades the panel out after wait, unless its state changes
// meanwhile.
func (o *Overlay) fadeAfterDelay(wait time.Duration) {
	o.mu.Lock()
	gen := o.gen
	o.mu.Unlock()
	go func() {
		time.Sleep(wait)
		for i := fadeSteps - 1; i >= 0; i-- {
			o.mu.Lock()
			if o.gen != gen || o.closed {
				o.mu.Unlock()
				return
			}
			o.f.Opacity = float64(i) / fadeSteps
			if i == 0 {
				o.f.Visible = false
				o.phase, o.started = "", time.Time{}
			}
			fr := o.f
			o.mu.Unlock()
			o.v.show(fr)
			time.Sleep(fadeStep)
		}
	}()
}

// Clicked is the panel's click: stop the recording.
func (o *Overlay) clicked() {
	o.mu.Lock()
	rec := o.phase == Starting || o.phase == Listening
	o.mu.Unlock()
	if rec && o.opt.OnStop != nil {
		go o.opt.OnStop()
	}
}

// Close hides the panel for good and gives Esc back.
func (o *Overlay) Close() {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.closed = true
	esc, grabbed := o.opt.Esc, o.grabbed
	o.grabbed = false
	o.mu.Unlock()
	if grabbed {
		o.release(esc) // not under o.mu: the grab's callback may be waiting for it
	}
	o.v.close()
}

// meter maps an RMS level onto 0..1 (-60 dBFS silent, 0 dBFS full), as
// the Dictation view's meter does.
func meter(rms float32) float64 {
	if rms <= 1e-6 {
		return 0
	}
	db := 20 * math.Log10(float64(rms))
	return min(1, max(0, (db+60)/60))
}
