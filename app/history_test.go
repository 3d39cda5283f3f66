package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/internal/shared"
)

// record makes a dictation-style recording of clip: the row first, then
// the WAV at the path it names, then FinishRecording.
func record(t *testing.T, a *App, clip string) Item {
	t.Helper()
	it, err := a.History.BeginRecording()
	path := it.AudioPath
	require.NoError(t, err)
	require.Equal(t, StatusRecording, it.Status)
	require.Equal(t, a.RecordingsDir(), filepath.Dir(path))
	b, err := os.ReadFile(shared.Path(t, "audio", clip+".wav"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	it, err = a.History.FinishRecording(it.ID, 0)
	require.NoError(t, err)
	return it
}

func TestHistoryRecordingsPendingDelete(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)

	it := record(t, a, "jfk")
	require.Equal(t, StatusRecorded, it.Status)
	require.Equal(t, KindDictation, it.Kind)
	require.InDelta(t, 11000, it.DurationMs, 100, "length read from the WAV")
	require.Equal(t, int64(352078), it.AudioBytes)

	p, err := a.History.Pending()
	require.NoError(t, err)
	require.Len(t, p, 1)
	require.Equal(t, it.ID, p[0].ID)

	u, err := a.History.Usage()
	require.NoError(t, err)
	require.Equal(t, Usage{Items: 1, AudioBytes: 352078, Oldest: it.CreatedAt}, u)

	// Transcribing a pending recording clears it from Pending.
	_, err = a.History.Retranscribe(it.ID, "")
	require.NoError(t, err)
	done := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == it.ID }, 60*time.Second).(Job)
	require.Equal(t, JobDone, done.Status, done.Error)
	require.Equal(t, kitText(t, "jfk"), done.Text)
	p, err = a.History.Pending()
	require.NoError(t, err)
	require.Empty(t, p)
	it, err = a.History.Get(it.ID)
	require.NoError(t, err)
	require.Equal(t, "kit", it.Model)

	// Re-transcribe with another model (the kit's f16 file, imported:
	// services take model names, never paths).
	f16, err := a.Files.Import(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"))
	require.NoError(t, err)
	_, err = a.History.Retranscribe(it.ID, f16)
	require.NoError(t, err)
	n := 0
	done = ev.wait(t, "transcription:done", func(d any) bool {
		if d.(Job).ID == it.ID {
			n++
		}
		return n == 2
	}, 60*time.Second).(Job)
	require.Equal(t, JobDone, done.Status, done.Error)
	require.Equal(t, kitText(t, "jfk"), done.Text)
	it, err = a.History.Get(it.ID)
	require.NoError(t, err)
	require.Equal(t, "ggml-kit-tiny.en-f16", it.Model)
	f16Path, _, err := a.Models.resolveSpeech(f16)
	require.NoError(t, err)
	require.Equal(t, 1, a.rt.Loads(f16Path), "the other model was loaded")

	af, err := a.History.AudioFile(it.ID)
	require.NoError(t, err)
	require.Equal(t, it.AudioPath, af)
	require.NoError(t, a.History.Delete(it.ID))
	_, err = a.History.AudioFile(it.ID)
	require.Error(t, err)
	_, err = os.Stat(it.AudioPath)
	require.ErrorIs(t, err, os.ErrNotExist, "deleting an item removes its recording")
	_, err = a.History.Get(it.ID)
	require.Error(t, err)
	require.Error(t, a.History.Delete(it.ID))

	// The jobs below stay queued behind the speech model, held here, so
	// that deleting them cancels them whatever the machine's speed (the
	// first job could finish before its delete).
	kitPath, _, err := a.Models.resolveSpeech("")
	require.NoError(t, err)
	held, err := a.rt.Speech(context.Background(), kitPath, runtime.Dictation)
	require.NoError(t, err)
	defer held.Release()

	// A file item never deletes the user's file.
	src := filepath.Join(t.TempDir(), "mine.wav")
	b, _ := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, os.WriteFile(src, b, 0o644))
	job, err := a.Files.Add(src, "")
	require.NoError(t, err)
	af, err = a.History.AudioFile(job.ID)
	require.NoError(t, err)
	realSrc, err := filepath.EvalSymlinks(src)
	require.NoError(t, err)
	require.Equal(t, realSrc, af, "a file item replays from the user's file")
	// The user's own link to a file still plays: it is resolved here, since
	// /media opens without following links.
	link := filepath.Join(t.TempDir(), "linked.wav")
	require.NoError(t, os.Symlink(src, link))
	linked, err := a.Files.Add(link, "")
	require.NoError(t, err)
	af, err = a.History.AudioFile(linked.ID)
	require.NoError(t, err)
	require.Equal(t, realSrc, af)
	require.Eventually(t, func() bool { // the first job waits for the held model
		for _, in := range a.rt.Loaded() {
			if in.Waiting > 0 {
				return true
			}
		}
		return false
	}, shared.Wait(t, time.Minute), 5*time.Millisecond)
	require.NoError(t, a.History.Delete(linked.ID))
	ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == linked.ID }, 60*time.Second)
	// Deleting an item whose job is queued or running cancels the job.
	require.NoError(t, a.History.Delete(job.ID))
	d := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == job.ID }, 60*time.Second).(Job)
	require.Equal(t, JobCanceled, d.Status)
	held.Release()
	_, err = os.Stat(src)
	require.NoError(t, err)
	items, err := a.History.List("", 0, 0)
	require.NoError(t, err)
	require.Empty(t, items)
}

func TestRetention(t *testing.T) {
	data, mdir := t.TempDir(), t.TempDir()
	a := openApp(t, data, mdir, nil)

	old := func(days int) (Item, string) {
		path := filepath.Join(a.RecordingsDir(), "old.wav")
		if days < 5 {
			path = filepath.Join(a.RecordingsDir(), "new.wav")
		}
		require.NoError(t, os.WriteFile(path, make([]byte, 1000), 0o644))
		r, err := a.db.InsertItem(Item{Kind: KindDictation, Status: StatusDone, Text: "hello", AudioPath: path,
			CreatedAt: time.Now().Add(-time.Duration(days) * 24 * time.Hour).UnixMilli()}.row())
		require.NoError(t, err)
		return itemFromRow(r), path
	}
	oldItem, oldPath := old(10)
	newItem, newPath := old(1)

	// Forever (the default) keeps everything.
	n, err := a.History.ApplyRetention()
	require.NoError(t, err)
	require.Zero(t, n)
	u, err := a.History.Usage()
	require.NoError(t, err)
	require.Equal(t, 2, u.Items)
	require.Equal(t, int64(2000), u.AudioBytes)

	s, _ := a.Settings.Get()
	s.RetentionDays = 7
	_, err = a.Settings.Update(s)
	require.NoError(t, err, "a new retention applies at once")
	n, err = a.History.ApplyRetention()
	require.NoError(t, err)
	require.Zero(t, n, "already applied")
	_, err = a.History.Get(oldItem.ID)
	require.Error(t, err)
	_, err = os.Stat(oldPath)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = a.History.Get(newItem.ID)
	require.NoError(t, err)
	_, err = os.Stat(newPath)
	require.NoError(t, err)
	u, err = a.History.Usage()
	require.NoError(t, err)
	require.Equal(t, Usage{Items: 1, AudioBytes: 1000, Oldest: newItem.CreatedAt}, u)

	// Opening the data folder applies retention too.
	oldItem, oldPath = old(30)
	require.NoError(t, a.Close())
	b := openApp(t, data, mdir, nil)
	_, err = b.History.Get(oldItem.ID)
	require.Error(t, err, "deleted on start")
	_, err = os.Stat(oldPath)
	require.ErrorIs(t, err, os.ErrNotExist)
	items, err := b.History.List("", 0, 0)
	require.NoError(t, err)
	require.Len(t, items, 1)
}
