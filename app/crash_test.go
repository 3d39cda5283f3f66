package app

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/internal/shared"
)

// crashChildEnv switches the test binary into the child of
// TestCrashDuringTranscription; its value is "DATADIR MODELSDIR".
const crashChildEnv = "HARK_APP_CRASH_CHILD"

// crashChild records a dictation (row, then WAV), queues a file behind it
// and starts transcribing. Once the recording's first window is decoded
// it reports the ids on stdout and parks the worker there, inside the
// transcription, so the parent's SIGKILL lands mid-transcription every
// time rather than by luck of timing.
func crashChild(spec string) {
	dirs := strings.Fields(spec)
	reached := make(chan int64, 1)
	em := EmitterFunc(func(name string, data any) {
		if p, ok := data.(Progress); ok && name == "transcription:progress" && p.Progress > 0 {
			select {
			case reached <- p.ID:
			default:
			}
			select {} // the worker stays inside the transcription until SIGKILL
		}
	})
	a, err := New(Config{DataDir: dirs[0], ModelsDir: dirs[1], Emitter: em, Threads: 1, NoSpeedProbe: true})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	it, err := a.History.BeginRecording()
	path := it.AudioPath
	if err == nil {
		var b []byte
		if b, err = os.ReadFile(dirs[2]); err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
	}
	if err == nil {
		_, err = a.History.FinishRecording(it.ID, 0)
	}
	if err == nil {
		_, err = a.History.Retranscribe(it.ID, "")
	}
	var job Job
	if err == nil {
		job, err = a.Files.Add(dirs[2], "")
	}
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	id := <-reached
	fmt.Printf("RUNNING %d %d %d\n", id, it.ID, job.ID)
	select {}
}

func TestCrashDuringTranscription(t *testing.T) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		crashChild(spec)
		return
	}
	data, mdir := t.TempDir(), testModelsDir(t)
	clip := shared.Path(t, "audio", "jfk.wav")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashDuringTranscription$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+data+" "+mdir+" "+clip)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var running, recID, fileID int64
	select {
	case l := <-lines:
		_, err := fmt.Sscanf(l, "RUNNING %d %d %d", &running, &recID, &fileID)
		require.NoError(t, err, "child said %q", l)
	case <-time.After(shared.Wait(t, 60*time.Second)):
		cmd.Process.Kill()
		t.Fatal("the child never reached the transcription")
	}
	require.Equal(t, recID, running, "the recording is transcribed first")
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup runs
	cmd.Wait()

	// The database says the transcription was under way when it died.
	db, err := store.Open(filepath.Join(data, "hark.db"))
	require.NoError(t, err)
	r, err := db.Item(recID)
	require.NoError(t, err)
	require.Equal(t, StatusTranscribing, r.Status)
	r, err = db.Item(fileID)
	require.NoError(t, err)
	require.Equal(t, StatusQueued, r.Status)
	require.NoError(t, db.Close())

	ev := newEvents()
	a := openApp(t, data, mdir, ev)
	pending, err := a.History.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 2, "the interrupted recording and the queued file are both offered again")
	require.Equal(t, recID, pending[0].ID)
	require.Equal(t, fileID, pending[1].ID)
	rec := pending[0]
	require.Equal(t, StatusRecorded, rec.Status)
	require.Equal(t, "interrupted", rec.Error)
	require.Empty(t, rec.Text)
	require.Equal(t, filepath.Join(data, "recordings"), filepath.Dir(rec.AudioPath))
	require.InDelta(t, 11000, rec.DurationMs, 100, "the recording is intact")

	_, err = a.History.Retranscribe(rec.ID, "")
	require.NoError(t, err)
	done := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == rec.ID }, 60*time.Second).(Job)
	require.Equal(t, JobDone, done.Status, done.Error)
	require.Equal(t, kitText(t, "jfk"), done.Text)
	it, err := a.History.Get(rec.ID)
	require.NoError(t, err)
	require.Equal(t, StatusDone, it.Status)
	require.Empty(t, it.Error)
	require.Equal(t, kitText(t, "jfk"), it.Text)
}

// TestCrashMidRecording: a dictation killed while capturing leaves a row
// in "recording" and a WAV whose header disagrees with the data on disk;
// on restart it is pending with the length of the audio actually written.
func TestCrashMidRecording(t *testing.T) {
	data, mdir := t.TempDir(), t.TempDir()
	a := openApp(t, data, mdir, nil)
	it, err := a.History.BeginRecording()
	require.NoError(t, err)
	b, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	// Half the clip reached the disk; the header still claims all of it.
	require.NoError(t, os.WriteFile(it.AudioPath, b[:len(b)/2], 0o644))
	// No FinishRecording: the process "died" while recording. Closing the
	// database and dropping the data folder's lock stand in for the kill
	// (the row was committed already; the OS drops a dead process's lock).
	a.db.Close()
	a.lock.Close()

	b2 := openApp(t, data, mdir, nil)
	p, err := b2.History.Pending()
	require.NoError(t, err)
	require.Len(t, p, 1)
	require.Equal(t, it.ID, p[0].ID)
	require.Equal(t, StatusRecorded, p[0].Status)
	require.InDelta(t, 5500, p[0].DurationMs, 100, "the length of what was written")
	af, err := b2.History.AudioFile(it.ID)
	require.NoError(t, err)
	require.Equal(t, it.AudioPath, af, "the recording is kept for replay and transcription")
}
