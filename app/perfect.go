package app

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/harkapp/hark/app/platform"
	"github.com/harkapp/hark/engine/runtime"
)

// "Type now, perfect later" (opt-in): the fast text is inserted at once;
// then the saved recording is transcribed again in the background with a
// larger model (Settings; else the speech model with beam search) and the
// vocabulary, cleaned up with no time limit when the plan cleans up, and
// rewritten. If the result differs, it replaces the inserted text in place
// when the focused field still ends with that text and the same app has
// the focus (macOS, through Accessibility); otherwise (and always on X11,
// where a field cannot be read safely) it is offered: the
// "dictation:better" event, which the window and the overlay show, and a
// global keystroke (Settings) that copies it. History keeps the better
// transcript either way.

// BetterText is the payload of "dictation:better".
type BetterText struct {
	ItemID   int64  `json:"itemId"`
	Text     string `json:"text"`     // the better text
	Inserted string `json:"inserted"` // the text inserted at once
	Model    string `json:"model"`    // the model that made Text
	// Replaced: Text replaced Inserted in the focused field; else it is
	// offered, and Hotkey ("" = none) copies it.
	Replaced bool   `json:"replaced"`
	Hotkey   string `json:"hotkey,omitempty"`
}

// laterState is the offer standing: the last better text not swapped in.
type laterState struct {
	mu    sync.Mutex
	offer *BetterText
	field platform.TextField
}

// laterCleanupLimit bounds the background clean-up: no one waits on it,
// but a wedged model must not hold the chat model for good.
const laterCleanupLimit = 2 * time.Minute

// defaultBetterHotkey copies the offered text: a combination that types
// nothing in common apps.
func defaultBetterHotkey() string {
	if goruntime.GOOS == "darwin" {
		return "Ctrl+Option+V"
	}
	return "Ctrl+Alt+V"
}

// validateLater checks the clean-up limit and the "perfect later" fields.
func (d SettingsData) validateLater() error {
	switch {
	case d.CleanupTimeoutMs < 0 || d.CleanupTimeoutMs > 60_000:
		return fmt.Errorf("settings: cleanupTimeoutMs %d is not valid (0 = no limit, to 60000)", d.CleanupTimeoutMs)
	case len(d.PerfectModel) > 255 || !validModelName(d.PerfectModel):
		return fmt.Errorf("settings: perfectModel %q is not valid (the name of an installed model, not a path)", d.PerfectModel)
	case len(d.BetterHotkey) > 100:
		return fmt.Errorf("settings: betterHotkey is too long")
	case d.BetterHotkey != "" && (sameHotkey(d.BetterHotkey, d.Hotkey) || (d.ModeHotkey != "" && sameHotkey(d.BetterHotkey, d.ModeHotkey))):
		return fmt.Errorf("settings: betterHotkey %q is already the dictation or mode hotkey", d.BetterHotkey)
	}
	return nil
}

// setTextField plugs in what edits the focused text field (macOS); nil
// (Linux) offers every better text instead of replacing it.
func (d *Dictation) setTextField(f platform.TextField) {
	d.later.mu.Lock()
	d.later.field = f
	d.later.mu.Unlock()
}

// perfectLater starts the background pass over item id, whose text
// inserted went out following p.
func (d *Dictation) perfectLater(id int64, p *wordPlan, inserted, model string) {
	q := *p
	if model != "" {
		q.model = model
	}
	d.withdraw() // an older dictation's text must not be pasted for this one
	d.deps.life.background(func() {
		bt, err := d.perfect(d.deps.life.ctx, id, &q, inserted)
		if err != nil {
			if d.deps.life.ctx.Err() == nil {
				d.deps.emit.Emit(EventError, Problem{Error: "perfect later: " + err.Error()})
			}
			return
		}
		if bt != nil {
			d.deps.emit.Emit(EventDictationBetter, *bt)
		}
	})
}

// perfect transcribes item id again following q and swaps or offers the
// result; nil when it is what was inserted.
func (d *Dictation) perfect(ctx context.Context, id int64, q *wordPlan, inserted string) (*BetterText, error) {
	// Batch priority: the next dictation takes the model between windows.
	it, err := d.deps.transcription.transcribeWith(ctx, id, "", nil, speechBeams, runtime.Batch, nil, q)
	if err != nil {
		return nil, err
	}
	better := it.Text
	if q.cleanup != "" && better != "" {
		cctx, cancel := context.WithTimeout(ctx, laterCleanupLimit)
		c, err := d.cleaner().clean(cctx, better, cleanupInstruction(q), nil)
		cancel()
		if err == nil && strings.TrimSpace(c) != "" {
			better = strings.TrimSpace(c)
		}
	}
	better = q.rw.ApplyHeard(better, wordsOf(it.Segments))
	if better == "" || better == inserted {
		return nil, nil
	}
	return d.deliver(&BetterText{ItemID: id, Text: better, Inserted: inserted, Model: it.Model}, q)
}

// deliver swaps bt.Text for bt.Inserted in the focused field when that is
// safe, else offers it.
func (d *Dictation) deliver(bt *BetterText, q *wordPlan) (*BetterText, error) {
	inserted, better := bt.Inserted, bt.Text
	d.later.mu.Lock()
	field := d.later.field
	d.later.mu.Unlock()
	// Only where Hark typed: a copy went into no field, and another app
	// in front may end with the same words by chance.
	if field != nil && inserted != "" && q.output != platform.ModeCopy && d.focusedApp() == q.app {
		ok, err := field.ReplaceEnd(inserted, better)
		if err == nil && ok {
			bt.Replaced = true
			return bt, nil
		}
	}
	set, err := d.deps.settings.Get()
	if err != nil {
		return nil, err
	}
	bt.Hotkey = set.BetterHotkey
	d.later.mu.Lock()
	d.later.offer = bt
	d.later.mu.Unlock()
	return bt, nil
}

// withdraw drops the offer standing, telling the UI
// ("dictation:better-withdrawn").
func (d *Dictation) withdraw() {
	d.later.mu.Lock()
	bt := d.later.offer
	d.later.offer = nil
	d.later.mu.Unlock()
	if bt != nil {
		d.deps.emit.Emit(EventBetterWithdrawn, *bt)
	}
}

// errNoOffer: nothing to copy.
var errNoOffer = errors.New("no better text is offered")

// Better returns the better text offered now (nil when none).
func (d *Dictation) Better() (*BetterText, error) {
	d.later.mu.Lock()
	defer d.later.mu.Unlock()
	if d.later.offer == nil {
		return nil, nil
	}
	bt := *d.later.offer
	return &bt, nil
}

// CopyBetter copies the better text offered to the clipboard (the global
// keystroke and the window's button) and withdraws the offer.
func (d *Dictation) CopyBetter() (BetterText, error) {
	d.mu.Lock()
	out := d.out
	d.mu.Unlock()
	d.later.mu.Lock()
	bt := d.later.offer
	d.later.mu.Unlock()
	if bt == nil {
		return BetterText{}, errNoOffer
	}
	if out == nil {
		return BetterText{}, errors.New("copying: no clipboard in this build")
	}
	if err := out.Insert(bt.Text, platform.ModeCopy, false); err != nil {
		return BetterText{}, err
	}
	d.later.mu.Lock()
	if d.later.offer == bt {
		d.later.offer = nil
	}
	d.later.mu.Unlock()
	d.deps.emit.Emit(EventBetterCopied, *bt)
	return *bt, nil
}
