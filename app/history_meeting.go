package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/speakers"
)

// KindMeeting is a recorded meeting's History entry: its recording and
// notes live in the meeting's own folder (app/meeting), deleted with it.
const KindMeeting = "meeting"

// meetingItem is the History entry of a meeting in dir: its text is the
// notes' lines with their speakers (so search finds what either side
// said), a segment a line.
func meetingItem(dir string, meta meeting.Meta, n meeting.Notes, status string) Item {
	it := Item{Kind: KindMeeting, CreatedAt: meta.Started.UnixMilli(), Title: n.Title,
		AudioPath: filepath.Join(dir, meeting.AudioName), DurationMs: int64(meta.Duration * 1000), Status: status,
		Language: "en", PromptTerms: []string{}}
	it.setNotes(n)
	return it
}

// setNotes puts a meeting's notes in the entry.
func (it *Item) setNotes(n meeting.Notes) {
	var lines []string
	it.Segments = make([]whisper.Segment, 0, len(n.Lines))
	for i, l := range n.Lines {
		text := speakers.Cue(l.Speaker, l.Text, false)
		lines = append(lines, text)
		it.Segments = append(it.Segments, whisper.Segment{ID: i, Start: l.Start, End: l.End, Text: text})
	}
	it.Text = strings.Join(lines, "\n")
}

// addMeeting adds a finished meeting to the history.
func (h *History) addMeeting(it Item) (Item, error) {
	r, err := h.deps.db.InsertItem(it.row())
	if err != nil {
		return Item{}, err
	}
	it = itemFromRow(r)
	h.deps.emit.Emit(EventHistoryChanged, it)
	return it, nil
}

// updateMeeting saves a meeting entry changed by its final pass.
func (h *History) updateMeeting(it Item) error {
	if err := h.save(it); err != nil {
		return err
	}
	h.deps.emit.Emit(EventHistoryChanged, it)
	return nil
}

// meetingDir is the folder of a meeting entry, checked to be one of the
// meetings folder's own (the database is not trusted to name a folder
// to delete).
func (h *History) meetingDir(it Item) (string, error) {
	dir := filepath.Dir(it.AudioPath)
	if h.deps.meetingsRoot == "" || it.AudioPath == "" || filepath.Dir(dir) != filepath.Clean(h.deps.meetingsRoot) ||
		filepath.Base(it.AudioPath) != meeting.AudioName {
		return "", fmt.Errorf("item %d: %q is not a meeting's recording", it.ID, it.AudioPath)
	}
	return dir, nil
}

// deleteMeeting removes a meeting entry and its folder (recording, notes,
// transcript), its final pass canceled first.
func (h *History) deleteMeeting(it Item) error {
	dir, err := h.meetingDir(it)
	if err != nil {
		return err
	}
	if h.deps.cancelMeeting != nil {
		h.deps.cancelMeeting(it.ID)
	}
	if err := h.deps.db.DeleteItem(it.ID); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("item %d deleted, but its meeting folder was not: %w", it.ID, err)
	}
	h.deps.emit.Emit(EventHistoryDeleted, DeletedItem{ID: it.ID})
	return nil
}
