// Package meeting records meetings to disk: the two aligned channels of
// audio/meeting ("You", "Others") streamed into a stereo WAV that is valid
// at every moment, beside a meta.json saying whether the recording
// finished. A meeting whose process died (a crash, kill -9) is found on
// the next start by Unfinished and made whole by Interrupt, losing only
// the write in flight; it then waits for the user, who resumes it
// (Resume: the recording goes on in the same file) or finishes it
// (Finish).
package meeting

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// States of a meeting.
const (
	StateRecording = "recording"
	StateFinished  = "finished"
	// StateInterrupted: cut short by a crash, made whole, and waiting to
	// be resumed or finished.
	StateInterrupted = "interrupted"
)

// Files in a meeting's folder.
const (
	metaName  = "meta.json"
	AudioName = "audio.wav"
)

// Marker is a note the user put on the timeline.
type Marker struct {
	At   float64 `json:"at"` // seconds from the start
	Text string  `json:"text"`
}

// Meta describes a meeting on disk.
type Meta struct {
	ID       string    `json:"id"`
	Started  time.Time `json:"started"`
	State    string    `json:"state"`
	Rate     int       `json:"rate"`
	Channels int       `json:"channels"`
	// Duration is the audio kept, in seconds (set when finished).
	Duration float64 `json:"duration"`
	// Recovered: the recording was cut short (a crash) and finished on a
	// later start.
	Recovered bool `json:"recovered,omitempty"`
	// CutAt is when a crash cut the recording short (its file's last
	// write), set by Interrupt.
	CutAt time.Time `json:"cut_at,omitzero"`
	// LostSeconds is audio given up while the disk was full.
	LostSeconds float64  `json:"lost_seconds,omitempty"`
	SaveError   string   `json:"save_error,omitempty"`
	Markers     []Marker `json:"markers,omitempty"`
}

// maxMeta bounds a meta.json read back (markers included).
const maxMeta = 1 << 20

// readMeta reads a meeting's meta.json.
func readMeta(dir string) (Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaName))
	if err != nil {
		return Meta{}, err
	}
	if len(b) > maxMeta {
		return Meta{}, fmt.Errorf("meeting: %s is too large", filepath.Join(dir, metaName))
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, fmt.Errorf("meeting: %s: %w", filepath.Join(dir, metaName), err)
	}
	return m, nil
}

// writeMeta replaces meta.json atomically (a crash leaves the old or the
// new one, never half of one).
func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, metaName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, metaName))
}

// List returns the meetings under root, newest first.
func List(root string) ([]Meta, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		m, err := readMeta(filepath.Join(root, e.Name()))
		if err != nil || m.ID != e.Name() {
			continue // not a meeting (or one being created)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}

// Read reads the meeting id's meta.json.
func Read(root, id string) (Meta, error) {
	if id == "" || filepath.Base(id) != id || id == "." || id == ".." {
		return Meta{}, fmt.Errorf("meeting: invalid id %q", id)
	}
	return readMeta(Dir(root, id))
}

// Dir is a meeting's folder.
func Dir(root, id string) string { return filepath.Join(root, id) }
