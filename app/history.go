package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
)

// Item kinds.
const (
	KindDictation = "dictation"
	KindFile      = "file"
)

// Item statuses. An item is "recording" while capture writes its WAV,
// "recorded" once the audio is complete but not transcribed (Pending),
// "queued"/"transcribing" while a job has it, then "done" or "failed".
const (
	StatusRecording    = "recording"
	StatusRecorded     = "recorded"
	StatusQueued       = "queued"
	StatusTranscribing = "transcribing"
	StatusDone         = "done"
	StatusFailed       = "failed"
)

// Item is a history entry: a dictation or a transcribed file.
type Item struct {
	ID          int64             `json:"id"`
	Kind        string            `json:"kind"` // "dictation" | "file" | "meeting"
	CreatedAt   int64             `json:"createdAt"`
	Title       string            `json:"title"`
	SourcePath  string            `json:"sourcePath"` // the user's file (file items); Hark never deletes it
	AudioPath   string            `json:"audioPath"`  // a recording Hark owns (deleted with the item)
	DurationMs  int64             `json:"durationMs"`
	Status      string            `json:"status"`
	Text        string            `json:"text"`
	Segments    []whisper.Segment `json:"segments"` // the one timed-text type, engine to UI
	Model       string            `json:"model"`
	Language    string            `json:"language"`
	Error       string            `json:"error"`
	AudioBytes  int64             `json:"audioBytes"`
	Mode        string            `json:"mode"`        // the dictation mode used ("" = none)
	PromptTerms []string          `json:"promptTerms"` // the vocabulary terms put in Whisper's prompt
}

// Usage is what the history holds on disk.
type Usage struct {
	Items      int   `json:"items"`
	AudioBytes int64 `json:"audioBytes"` // every file under recordings/
	Oldest     int64 `json:"oldest"`     // createdAt of the oldest item, 0 when empty
}

// result rebuilds the whisper result of a transcribed item, for export.
func (it Item) result() *whisper.Result {
	r := &whisper.Result{Text: it.Text, Language: it.Language, Duration: float64(it.DurationMs) / 1000, Segments: it.Segments}
	return r
}

func itemFromRow(r store.Item) Item {
	it := Item{ID: r.ID, Kind: r.Kind, CreatedAt: r.CreatedAt, Title: r.Title, SourcePath: r.SourcePath,
		AudioPath: r.AudioPath, DurationMs: r.DurationMs, Status: r.Status, Text: r.Text, Model: r.Model,
		Language: r.Language, Error: r.Error, Mode: r.Mode}
	it.Segments = decodeSegments(r.Segments)
	if err := json.Unmarshal([]byte(r.PromptTerms), &it.PromptTerms); err != nil || it.PromptTerms == nil {
		it.PromptTerms = []string{}
	}
	if it.AudioPath != "" {
		if st, err := os.Stat(it.AudioPath); err == nil {
			it.AudioBytes = st.Size()
		}
	}
	return it
}

func (it Item) row() store.Item {
	segs := it.Segments
	if segs == nil {
		segs = []whisper.Segment{}
	}
	raw, _ := json.Marshal(segs)
	return store.Item{ID: it.ID, Kind: it.Kind, CreatedAt: it.CreatedAt, Title: it.Title, SourcePath: it.SourcePath,
		AudioPath: it.AudioPath, DurationMs: it.DurationMs, Status: it.Status, Text: it.Text, Segments: string(raw),
		Model: it.Model, Language: it.Language, Error: it.Error}
}

// audioFile is the file an item is transcribed from and replayed: its
// recording, else the user's file.
func (it Item) audioFile() string {
	if it.AudioPath != "" {
		return it.AudioPath
	}
	return it.SourcePath
}

// History is the history service.
type History struct {
	deps historyDeps
}

// historyDeps is what History uses of the app: the items' store, the
// recordings folder, the settings (retention), and three steps of other
// services: whether an item is being recorded (Dictation), cancelling an
// item's job and queueing one (Transcription).
type historyDeps struct {
	db        *store.Store
	emit      Emitter
	recDir    string
	settings  settingsReader
	recording func(id int64) bool
	cancelJob func(id int64)
	enqueue   func(id int64, model string) (Job, error)
	// meetingsRoot holds the meetings' folders; cancelMeeting and
	// finishMeeting cancel and rerun a meeting's final pass (Meetings).
	meetingsRoot  string
	cancelMeeting func(id int64)
	finishMeeting func(id int64) error
}

// List returns items newest first; query (words, all required) filters on
// the transcript and title.
func (h *History) List(query string, limit, offset int) ([]Item, error) {
	rows, err := h.deps.db.Items(query, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(rows))
	for _, r := range rows {
		out = append(out, itemFromRow(r))
	}
	return out, nil
}

// Get returns one item.
func (h *History) Get(id int64) (Item, error) {
	r, err := h.deps.db.Item(id)
	if err != nil {
		return Item{}, err
	}
	return itemFromRow(r), nil
}

func (h *History) save(it Item) error { return h.deps.db.UpdateItem(it.row()) }

// AudioFile is the file to replay an item from: its recording, else the
// user's file (the media handler serves it).
func (h *History) AudioFile(id int64) (string, error) {
	it, err := h.Get(id)
	if err != nil {
		return "", err
	}
	p := it.audioFile()
	if p == "" {
		return "", fmt.Errorf("item %d has no audio", id)
	}
	if it.AudioPath == "" {
		// The user's own file may be a link they made: serve its target.
		// Hark's recordings are never links, and /media refuses one.
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("item %d: its audio is gone: %w", id, err)
	}
	return p, nil
}

// Delete removes an item and its recording (never the user's own file).
// A running job on it is canceled first.
func (h *History) Delete(id int64) error {
	it, err := h.Get(id)
	if err != nil {
		return err
	}
	if it.Kind == KindMeeting {
		return h.deleteMeeting(it)
	}
	if h.deps.recording(id) {
		return fmt.Errorf("item %d is being recorded; stop dictation first", id)
	}
	h.deps.cancelJob(id)
	if err := h.deps.db.DeleteItem(id); err != nil {
		return err
	}
	if it.AudioPath != "" {
		if err := os.Remove(it.AudioPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("item %d deleted, but its recording was not: %w", id, err)
		}
	}
	h.deps.emit.Emit(EventHistoryDeleted, DeletedItem{ID: id})
	return nil
}

// Retranscribe queues the item again, with model ("" = the settings'
// speech model). The item keeps its old text until the new one is done.
func (h *History) Retranscribe(id int64, model string) (Item, error) {
	if it, err := h.Get(id); err == nil && it.Kind == KindMeeting {
		// A meeting is transcribed channel by channel (its speakers): its
		// final pass runs again, with the settings' model.
		if err := h.deps.finishMeeting(id); err != nil {
			return Item{}, err
		}
		return h.Get(id)
	}
	if _, err := h.deps.enqueue(id, model); err != nil {
		return Item{}, err
	}
	return h.Get(id)
}

// Pending lists the recordings that were never transcribed (capture or
// transcription cut short by a crash, or a failure), oldest first.
func (h *History) Pending() ([]Item, error) {
	rows, err := h.deps.db.ItemsWithStatus(StatusRecorded, StatusFailed)
	if err != nil {
		return nil, err
	}
	out := []Item{}
	for _, r := range rows {
		if r.Status == StatusFailed && r.Text != "" || r.Kind == KindMeeting {
			continue // meetings: Meetings runs their final pass again at start
		}
		out = append(out, itemFromRow(r))
	}
	return out, nil
}

// Usage reports the item count and the bytes the recordings take.
func (h *History) Usage() (Usage, error) {
	rows, err := h.deps.db.AllItems()
	if err != nil {
		return Usage{}, err
	}
	u := Usage{Items: len(rows)}
	if len(rows) > 0 {
		u.Oldest = rows[0].CreatedAt
	}
	err = filepath.WalkDir(h.deps.recDir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			u.AudioBytes += info.Size()
		}
		return nil
	})
	return u, err
}

// Export renders a transcribed item as "txt", "srt", "vtt" or "json".
func (h *History) Export(id int64, format string) (string, error) {
	if !slices.Contains([]string{whisper.FormatTXT, whisper.FormatSRT, whisper.FormatVTT, whisper.FormatJSON}, format) {
		return "", fmt.Errorf("unknown export format %q (txt, srt, vtt or json)", format)
	}
	it, err := h.Get(id)
	if err != nil {
		return "", err
	}
	if it.Status != StatusDone && it.Text == "" {
		return "", fmt.Errorf("item %d has no transcript yet (status %s)", id, it.Status)
	}
	var b bytes.Buffer
	if err := whisper.Write(&b, it.result(), format); err != nil {
		return "", err
	}
	return b.String(), nil
}

// BeginRecording creates a dictation item in state "recording" and returns
// it; its AudioPath (under recordings/) is where the WAV must be written.
// The row exists before capture starts, so a crash leaves it to be found
// by Pending on the next start. (Two results, not three: bound methods
// return a value and an error.)
func (h *History) BeginRecording() (Item, error) {
	now := time.Now()
	name := fmt.Sprintf("%s-%03d.wav", now.Format("20060102-150405"), now.Nanosecond()/1e6)
	path := filepath.Join(h.deps.recDir, name)
	r, err := h.deps.db.InsertItem(store.Item{Kind: KindDictation, CreatedAt: now.UnixMilli(), Status: StatusRecording,
		Title: "Dictation " + now.Format("2006-01-02 15:04"), AudioPath: path})
	if err != nil {
		return Item{}, err
	}
	it := itemFromRow(r)
	h.deps.emit.Emit(EventHistoryChanged, it)
	return it, nil
}

// FinishRecording marks a recording complete ("recorded") with its
// length; durationMs <= 0 reads it from the WAV header.
func (h *History) FinishRecording(id int64, durationMs int64) (Item, error) {
	it, err := h.Get(id)
	if err != nil {
		return Item{}, err
	}
	if durationMs <= 0 && it.AudioPath != "" {
		if d, err := audio.WAVDurationMs(it.AudioPath); err == nil {
			durationMs = d
		}
	}
	it.DurationMs = durationMs
	it.Status = StatusRecorded
	if err := h.save(it); err != nil {
		return Item{}, err
	}
	h.deps.emit.Emit(EventHistoryChanged, it)
	return h.Get(id)
}

// ApplyRetention deletes the items older than the settings' RetentionDays
// (with their recordings) and returns how many went. Items a job or a
// recording holds are left for the next pass.
func (h *History) ApplyRetention() (int, error) {
	s, err := h.deps.settings.Get()
	if err != nil {
		return 0, err
	}
	if s.RetentionDays <= 0 {
		return 0, nil
	}
	cutoff := time.Now().Add(-time.Duration(s.RetentionDays) * 24 * time.Hour).UnixMilli()
	rows, err := h.deps.db.ItemsBefore(cutoff)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if r.Status == StatusRecording || r.Status == StatusQueued || r.Status == StatusTranscribing {
			continue
		}
		if err := h.Delete(r.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// recover runs at start: what a crash interrupted becomes pending again.
// A recording cut short keeps the audio written so far (the WAV header is
// kept valid as it grows, and its length is re-read from the file size).
func (h *History) recover() error {
	rows, err := h.deps.db.ItemsWithStatus(StatusRecording, StatusQueued, StatusTranscribing)
	if err != nil {
		return err
	}
	for _, r := range rows {
		it := itemFromRow(r)
		if it.Status == StatusRecording && it.AudioPath != "" {
			if d, err := audio.WAVDurationMs(it.AudioPath); err == nil {
				it.DurationMs = d
			}
		}
		it.Status = StatusRecorded
		if it.Text != "" {
			it.Status = StatusDone // a re-transcription was interrupted: the old text stands
		}
		it.Error = "interrupted"
		if err := h.save(it); err != nil {
			return err
		}
	}
	return nil
}
