package app

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harkapp/hark/engine/runtime"
)

// The clean-up must never make the user wait more than they allow: the
// chat model streams its answer, and if it has not finished within the
// time limit (Settings, default 1.5 s, counted from release to insertion)
// the raw text is inserted and the clean-up is dropped. With "type now,
// perfect later" the background pass cleans up the better transcript with
// no such limit and offers or swaps it (perfect.go).

// cleaner cleans dictated text up, calling onText (may be nil) with the
// answer so far as it streams. The chat model does it (Chat.clean); tests
// put in a slow fake.
type cleaner interface {
	clean(ctx context.Context, text, instruction string, onText func(string)) (string, error)
}

// Clean-up states in "dictation:cleanup".
const (
	CleanupRunning = "running"
	CleanupDone    = "done"
	CleanupTimeout = "timeout"
	CleanupFailed  = "failed"
)

// CleanupEvent is the payload of "dictation:cleanup": the streamed answer
// while it runs, then how it ended and after how long.
type CleanupEvent struct {
	State string `json:"state"`
	Text  string `json:"text"` // the answer so far (running, done)
	Ms    int64  `json:"ms"`   // since the clean-up began
	Error string `json:"error,omitempty"`
}

// maxContextTerms bounds the vocabulary named in the instruction.
const maxContextTerms = 40

// cleanupInstruction is the plan's clean-up instruction with the mode's
// context: the app the text goes into and the vocabulary, so the model
// keeps those names as the user spells them.
func cleanupInstruction(p *wordPlan) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.cleanup))
	if p.app != "" || p.mode != "" {
		b.WriteString("\n\nThe text will be inserted")
		if p.app != "" {
			fmt.Fprintf(&b, " into the app %q", p.app)
		}
		if p.mode != "" {
			fmt.Fprintf(&b, " (dictation mode %q)", p.mode)
		}
		b.WriteString("; match its style.")
	}
	if len(p.terms) > 0 {
		var names []string
		for _, t := range p.terms[:min(len(p.terms), maxContextTerms)] {
			names = append(names, t.Text)
		}
		b.WriteString("\nThese names and terms are spelled exactly so: " + strings.Join(names, ", ") + ".")
	}
	return b.String()
}

// cleaner is the clean-up model: the one SetCleaner put in, else the chat
// model.
func (d *Dictation) cleaner() cleaner {
	if c := d.cleanWith.Load(); c != nil {
		return *c
	}
	return d.deps.chat
}

// cleanBounded cleans text up within limit (0 = no limit), streaming the
// answer as "dictation:cleanup" events. ok is false when the clean-up
// failed or ran out of time: text comes back unchanged, and the model is
// stopped (its context is canceled) rather than left to finish unseen.
func (d *Dictation) cleanBounded(ctx context.Context, c cleaner, text, instruction string, limit time.Duration) (string, bool) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var over atomic.Bool // no "running" event after the outcome
	ms := func() int64 { return time.Since(start).Milliseconds() }
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		t, err := c.clean(ctx, text, instruction, func(sofar string) {
			if !over.Load() {
				d.deps.emit.Emit(EventDictationCleanup, CleanupEvent{State: CleanupRunning, Text: sofar, Ms: ms()})
			}
		})
		done <- result{t, err}
	}()
	var expire <-chan time.Time
	if limit > 0 {
		var stop func() bool
		expire, stop = cleanupLimit(limit)
		defer stop()
	}
	select {
	case r := <-done:
		over.Store(true)
		if r.err != nil {
			d.deps.emit.Emit(EventDictationCleanup, CleanupEvent{State: CleanupFailed, Ms: ms(), Error: r.err.Error()})
			return text, false
		}
		d.deps.emit.Emit(EventDictationCleanup, CleanupEvent{State: CleanupDone, Text: r.text, Ms: ms()})
		return r.text, true
	case <-expire:
		over.Store(true)
		d.deps.emit.Emit(EventDictationCleanup, CleanupEvent{State: CleanupTimeout, Ms: ms()})
		return text, false
	}
}

// cleanupLimit starts the clean-up's time limit: its channel fires when
// the limit is up. A test holds it until the answer has streamed, so the
// limit never races the cleaner's goroutine on a loaded machine.
var cleanupLimit = func(limit time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(limit)
	return t.C, t.Stop
}

// preloadChat loads the chat model in the background when a recording
// that will be cleaned up starts, so its load does not eat the clean-up's
// time limit.
func (d *Dictation) preloadChat() {
	path, _, err := d.deps.models.resolveChat("")
	if err != nil {
		return
	}
	d.deps.life.background(func() {
		// A warm-up: the clean-up that uses the model reports a failed load.
		_ = d.deps.models.withChat(d.deps.life.ctx, path, func(*runtime.LLMModel) error { return nil })
	})
}
