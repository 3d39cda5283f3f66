package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestUploadsOnly: the services reachable over HTTP take upload ids and
// model names, never paths; an upload becomes the item's recording and
// goes with it.
func TestUploadsOnly(t *testing.T) {
	ev := newEvents()
	data := t.TempDir()
	a := openApp(t, data, testModelsDir(t), ev)
	secret := filepath.Join(t.TempDir(), "secret.wav")
	wav, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(secret, wav, 0o600))

	// A path is refused wherever a page could send one.
	_, err = a.Transcription.Add(secret, "")
	require.ErrorContains(t, err, "not by path")
	_, err = a.Models.Import(shared.Path(t, "models", "stories260K.gguf"))
	require.ErrorContains(t, err, "not by path")
	for _, m := range []string{secret, "../kit", "/etc/passwd", `..\kit`} {
		id, err := a.Files.SaveUpload("clip.wav", bytes.NewReader(wav))
		require.NoError(t, err)
		_, err = a.Transcription.Add(id, m)
		require.ErrorContains(t, err, "not an installed model's name", m)
		_, err = a.Chat.Create(m)
		require.Error(t, err, m)
	}
	s, err := a.Settings.Get()
	require.NoError(t, err)
	for _, m := range []string{secret, "../x", "a/b"} {
		bad := s
		bad.SpeechModel = m
		_, err = a.Settings.Update(bad)
		require.ErrorContains(t, err, "not a path")
		bad = s
		bad.ChatModel = m
		_, err = a.Settings.Update(bad)
		require.ErrorContains(t, err, "not a path")
	}
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "a refused call created an item")

	// An upload is transcribed from the recordings and deleted with its item.
	id, err := a.Files.SaveUpload("../../clip.wav", bytes.NewReader(wav))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(id, "upload-"), id)
	require.NotContains(t, id, string(filepath.Separator))
	job, err := a.Transcription.Add(id, "")
	require.NoError(t, err)
	require.Equal(t, "clip.wav", job.Name)
	_, err = a.Transcription.Add(id, "")
	require.ErrorContains(t, err, "used already", "an upload is used once")
	done := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == job.ID }, 60*time.Second).(Job)
	require.Equal(t, JobDone, done.Status, done.Error)
	it, err := a.History.Get(job.ID)
	require.NoError(t, err)
	require.Empty(t, it.SourcePath)
	require.Equal(t, a.RecordingsDir(), filepath.Dir(it.AudioPath))
	require.NoDirExists(t, filepath.Join(data, "uploads", id), "the upload's folder is gone")
	require.NoError(t, a.History.Delete(job.ID))
	require.NoFileExists(t, it.AudioPath)

	// A file that is no model: refused, the upload deleted, no temp path told.
	id, err = a.Files.SaveUpload("notes.gguf", strings.NewReader("not a model"))
	require.NoError(t, err)
	_, err = a.Models.Import(id)
	require.Error(t, err)
	require.NotContains(t, err.Error(), data, "the data folder's path is not shown")
	require.NoDirExists(t, filepath.Join(data, "uploads", id))
}

// TestUploadPlaylistRefused: a page uploads an HLS playlist or an ffconcat
// list naming a file only the app's user can read (the relative one next to
// the recordings, where the upload lands): the job fails with a clear error
// and no text of the secret reaches the item.
func TestUploadPlaylistRefused(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	require.NoError(t, os.MkdirAll(a.RecordingsDir(), 0o700))
	for _, pl := range shared.Playlists(t, a.RecordingsDir()) {
		id, err := a.Files.SaveUpload("clip.m4a", bytes.NewReader(pl.Data))
		require.NoError(t, err)
		job, err := a.Transcription.Add(id, "")
		require.NoError(t, err)
		done := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == job.ID }, 60*time.Second).(Job)
		require.Equal(t, JobFailed, done.Status, pl.Name)
		require.Contains(t, done.Error, "playlist", pl.Name)
		it, err := a.History.Get(job.ID)
		require.NoError(t, err)
		require.Empty(t, it.Text, "%s: the secret was read", pl.Name)
	}
}
