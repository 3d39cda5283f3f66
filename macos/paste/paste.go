// Package paste inserts dictated text into the focused app on macOS: it
// puts the text on the general pasteboard, synthesizes Cmd-V through
// CGEvent, and restores what the pasteboard held before once the target app
// has had time to read it. Copy-only and keystroke typing are the other
// modes. The ordering and restore rules are platform independent (this
// file, tested on Linux against a fake board); paste_darwin.go is the thin
// NSPasteboard/CGEvent layer.
package paste

import (
	"errors"
	"sync"
	"time"
	"unicode/utf16"
)

// Modes, matching the app's OutputMode setting.
const (
	ModePaste = "paste"
	ModeCopy  = "copy"
	ModeType  = "type"
)

// RestoreDelay is how long the previous clipboard waits before coming back:
// the target app reads the pasteboard when it handles Cmd-V, which can lag
// behind the event on a busy machine.
const RestoreDelay = 600 * time.Millisecond

// MaxSnapshotBytes bounds what is saved for restoring: an image or a file
// promise on the clipboard can be large, and it is copied into Go memory.
const MaxSnapshotBytes = 64 << 20

// ErrNotTrusted means macOS will drop synthesized key events because the
// app lacks the Accessibility permission; the text stays on the clipboard.
var ErrNotTrusted = errors.New("paste: Accessibility permission is needed to paste into other apps; the text is on the clipboard")

// Entry is one representation (UTI and bytes) of a pasteboard item.
type Entry struct {
	Type string
	Data []byte
}

// Snapshot is the saved content of the pasteboard, item by item.
type Snapshot struct {
	Items     [][]Entry
	Truncated bool // some data exceeded MaxSnapshotBytes and was left out
	size      int
}

// Add appends an entry to item i (creating items as needed) unless it would
// pass MaxSnapshotBytes, in which case it marks the snapshot truncated.
func (s *Snapshot) Add(i int, e Entry) {
	if s.size+len(e.Data) > MaxSnapshotBytes {
		s.Truncated = true
		return
	}
	for len(s.Items) <= i {
		s.Items = append(s.Items, nil)
	}
	s.Items[i] = append(s.Items[i], e)
	s.size += len(e.Data)
}

// board is the pasteboard as the paster needs it.
type board interface {
	ChangeCount() int
	Snapshot() (Snapshot, error)
	Restore(Snapshot) error
	// SetText replaces the content with text; transient marks it for
	// clipboard managers to skip (it is about to be replaced again).
	SetText(text string, transient bool) error
}

// paster serializes inserts and owns the pending restore.
type paster struct {
	mu      sync.Mutex
	b       board
	delay   time.Duration
	keys    func() error // synthesizes the paste keystroke
	pending *pending
}

type pending struct {
	snap   Snapshot
	expect int // the change count right after we wrote our text
	timer  *time.Timer
}

// insert writes text to the pasteboard, optionally sends the paste
// keystroke, and with restore schedules the old content to come back.
//
// A second insert while a restore is pending reuses the saved content (the
// user's, not our previous text) if the pasteboard still holds our text.
// If someone else changed the pasteboard meanwhile, we never overwrite
// their content. If the keystroke fails, nothing is restored, so the text
// can still be pasted by hand.
func (p *paster) insert(text string, sendKeys, restore bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()

	var saved *Snapshot
	if p.pending != nil {
		p.pending.timer.Stop()
		if p.b.ChangeCount() == p.pending.expect {
			s := p.pending.snap
			saved = &s
		}
		p.pending = nil
	}
	if restore && saved == nil {
		s, err := p.b.Snapshot()
		if err != nil {
			return err
		}
		saved = &s
	}
	if err := p.b.SetText(text, restore); err != nil {
		return err
	}
	expect := p.b.ChangeCount()
	if sendKeys {
		if err := p.keys(); err != nil {
			return err
		}
	}
	if restore {
		pd := &pending{snap: *saved, expect: expect}
		pd.timer = time.AfterFunc(p.delay, func() { p.fire(pd) })
		p.pending = pd
	}
	return nil
}

func (p *paster) fire(pd *pending) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != pd {
		return // superseded by a later insert
	}
	p.pending = nil
	if p.b.ChangeCount() == pd.expect {
		_ = p.b.Restore(pd.snap)
	}
}

// flush restores a pending snapshot now (for quitting).
func (p *paster) flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pending
	if pd == nil {
		return nil
	}
	pd.timer.Stop()
	p.pending = nil
	if p.b.ChangeCount() != pd.expect {
		return nil
	}
	return p.b.Restore(pd.snap)
}

// chunkUTF16 splits text into UTF-16 slices of at most max units without
// separating a surrogate pair, for typing through keyboard events.
func chunkUTF16(text string, max int) [][]uint16 {
	if max < 2 {
		max = 2
	}
	u := utf16.Encode([]rune(text))
	var out [][]uint16
	for len(u) > 0 {
		n := min(max, len(u))
		if n < len(u) && utf16.IsSurrogate(rune(u[n-1])) && u[n-1] < 0xDC00 {
			n-- // don't end on a high surrogate
		}
		out = append(out, u[:n])
		u = u[n:]
	}
	return out
}
