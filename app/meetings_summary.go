package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/speakers"
)

// A meeting's summary, asked for after the meeting (the Meeting view):
// the local chat model writes it from the notes' lines, bounded as the
// clean-up is, in time (summaryLimit: past it the model is stopped and
// nothing is kept) and in length (summaryTokens). It is kept in the notes
// (transcript.json, and notes.md's head) until a final pass rewrites
// them. A transcript longer than the model's context is summarized as far
// as it fits, and the summary says up to when.

const (
	// DefaultSummaryTokens bounds a summary's length.
	DefaultSummaryTokens = 256
	// DefaultSummaryLimit bounds the time a summary may take.
	DefaultSummaryLimit = 3 * time.Minute
	// DefaultSummaryPrompt is the chat model's instruction.
	DefaultSummaryPrompt = "Summarize this meeting transcript in a few short bullet points: the topics, the decisions and " +
		"who will do what. \"You\" is the person taking the notes. Reply with the bullet points only."
	// summaryMargin is the context kept for the chat template's tokens.
	summaryMargin = 64
)

// summarizer writes a summary of transcript lines in at most maxTokens,
// from as many lines (kept) as fit its context. The chat model does it
// (Chat.summarize); tests put in their own.
type summarizer interface {
	summarize(ctx context.Context, lines []string, maxTokens int) (text string, kept int, err error)
}

// summarize is summarizer on the chat model.
func (c *Chat) summarize(ctx context.Context, lines []string, maxTokens int) (string, int, error) {
	path, _, err := c.deps.models.resolveChat("")
	if err != nil {
		return "", 0, err
	}
	var out string
	kept := 0
	err = c.deps.withChat(ctx, path, func(m *runtime.LLMModel) error {
		budget := m.Gen.M.Context() - maxTokens - len(m.Gen.Tk.Encode(DefaultSummaryPrompt, false)) - summaryMargin
		var b strings.Builder
		for n := 0; kept < len(lines); kept++ {
			k := len(m.Gen.Tk.Encode(lines[kept]+"\n", false))
			if n+k > budget {
				break
			}
			n += k
			b.WriteString(lines[kept] + "\n")
		}
		if kept == 0 {
			return errors.New("the transcript's first line does not fit the chat model's context")
		}
		res, err := generateChat(ctx, m, []chat.Message{{Role: "system", Content: DefaultSummaryPrompt}, {Role: "user", Content: b.String()}},
			llm.GenerateOptions{MaxTokens: maxTokens}, nil)
		out = res.Text
		if errors.Is(err, llm.ErrContextFull) {
			err = nil
		}
		return err
	})
	if err != nil {
		return "", 0, err
	}
	if out = strings.TrimSpace(out); out == "" {
		return "", 0, errors.New("the chat model wrote no summary")
	}
	return out, kept, nil
}

// Summarize has the chat model summarize the meeting History entry item
// (its final pass done), in the background: the meeting's status then
// carries the summary, or the error.
func (m *Meetings) Summarize(item int64) (MeetingStatus, error) {
	if m.deps.closed() {
		return m.Status(), errClosed
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.passes[item] != nil:
		return m.status(), fmt.Errorf("item %d: the meeting's final pass is still running; summarize it when it is done", item)
	case m.summaries[item]:
		return m.status(), fmt.Errorf("item %d: the meeting is already being summarized", item)
	}
	it, err := m.deps.history.Get(item)
	if err != nil {
		return m.status(), err
	}
	dir, err := m.deps.history.meetingDir(it)
	if err != nil {
		return m.status(), err
	}
	notes, err := readMeetingNotes(dir)
	if err != nil {
		return m.status(), err
	}
	if len(notes.Lines) == 0 {
		return m.status(), fmt.Errorf("item %d: nothing was said in the meeting", item)
	}
	m.summaries[item] = true
	m.deps.life.background(func() { m.runSummary(item, dir, notes) })
	return m.emitStatus(), nil
}

// runSummary writes the summary of notes into the meeting's folder.
func (m *Meetings) runSummary(item int64, dir string, notes meeting.Notes) {
	ctx, cancel := context.WithTimeout(m.deps.life.ctx, m.summaryLimit)
	defer cancel()
	lines := make([]string, len(notes.Lines))
	for i, l := range notes.Lines {
		lines[i] = speakers.Cue(l.Speaker, l.Text, false)
	}
	text, kept, err := m.deps.summarizer.summarize(ctx, lines, m.summaryTokens)
	if errors.Is(err, context.DeadlineExceeded) || (err == nil && ctx.Err() != nil) {
		err = fmt.Errorf("the summary took longer than %v: stopped", m.summaryLimit)
	}
	if err == nil {
		if kept < len(notes.Lines) {
			text += fmt.Sprintf("\n\n(This summary covers the meeting up to %s: the rest did not fit the chat model's context.)",
				(time.Duration(notes.Lines[kept].Start) * time.Second).String())
		}
		notes.Summary = text
		err = writeMeetingNotes(dir, notes)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.summaries, item)
	if err == nil && m.lastItem == item {
		m.last = notes
	}
	st := m.status()
	if err != nil {
		log.Printf("hark: summarizing meeting item %d: %v", item, err)
		st.Error = "summary: " + err.Error()
	}
	m.deps.emit.Emit(EventMeetingStatus, st)
}
