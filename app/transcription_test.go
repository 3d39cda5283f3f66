package app

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

func TestTranscribeFileExportSearch(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	clip := shared.Path(t, "audio", "jfk.wav")
	want := kitText(t, "jfk")

	job, err := a.Files.Add(clip, "")
	require.NoError(t, err)
	require.Equal(t, JobQueued, job.Status)
	require.Equal(t, "kit", job.Model, "the first installed speech model")
	require.Equal(t, "jfk.wav", job.Name)

	done := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == job.ID }, 60*time.Second).(Job)
	require.Equal(t, JobDone, done.Status, done.Error)
	require.Equal(t, want, done.Text)
	require.NotEmpty(t, done.Segments)

	// Progress: at least one fraction and the finished segment.
	var sawSeg, sawFrac bool
	for _, p := range ev.named("transcription:progress") {
		p := p.(Progress)
		require.Equal(t, job.ID, p.ID)
		sawFrac = sawFrac || p.Progress > 0
		sawSeg = sawSeg || (p.Segment != nil && strings.TrimSpace(p.Segment.Text) != "")
	}
	require.True(t, sawFrac && sawSeg, "progress events carry the fraction and the segments")

	it, err := a.History.Get(job.ID)
	require.NoError(t, err)
	require.Equal(t, StatusDone, it.Status)
	require.Equal(t, KindFile, it.Kind)
	require.Equal(t, want, it.Text)
	require.Equal(t, "kit", it.Model)
	require.Equal(t, "en", it.Language)
	require.InDelta(t, 11000, it.DurationMs, 300, "jfk.wav is 11 s")
	require.Empty(t, it.AudioPath, "a file item keeps the user's file, it makes no copy")

	// SRT cue times: ascending, inside the audio, and the speech's span as
	// the reference times it (0.00 to 10.68 s).
	srt, err := a.History.Export(job.ID, "srt")
	require.NoError(t, err)
	cues := regexp.MustCompile(`(\d\d):(\d\d):(\d\d),(\d\d\d) --> (\d\d):(\d\d):(\d\d),(\d\d\d)`).FindAllStringSubmatch(srt, -1)
	require.NotEmpty(t, cues, srt)
	ms := func(m []string) int64 {
		h, _ := strconv.Atoi(m[0])
		mi, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		return int64(((h*60+mi)*60+s)*1000 + f)
	}
	var last int64
	for _, c := range cues {
		start, end := ms(c[1:5]), ms(c[5:9])
		require.GreaterOrEqual(t, start, last)
		require.Greater(t, end, start)
		require.LessOrEqual(t, end, it.DurationMs+100)
		last = end
	}
	require.InDelta(t, 0, ms(cues[0][1:5]), 500)
	require.InDelta(t, 10680, last, 500)
	require.Contains(t, srt, "ask not what your country can do for you")

	txt, err := a.History.Export(job.ID, "txt")
	require.NoError(t, err)
	require.Equal(t, want, strings.TrimSpace(txt))
	vtt, err := a.History.Export(job.ID, "vtt")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(vtt, "WEBVTT"))
	js, err := a.History.Export(job.ID, "json")
	require.NoError(t, err)
	var parsed struct{ Text string }
	require.NoError(t, json.Unmarshal([]byte(js), &parsed))
	require.Equal(t, want, strings.TrimSpace(parsed.Text))
	_, err = a.History.Export(job.ID, "docx")
	require.Error(t, err)

	// Search.
	found, err := a.History.List("fellow AMERICANS", 10, 0)
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, job.ID, found[0].ID)
	found, err = a.History.List("fellow zebras", 10, 0)
	require.NoError(t, err)
	require.Empty(t, found)
	found, err = a.History.List("jfk", 10, 0)
	require.NoError(t, err)
	require.Len(t, found, 1, "the title is searched too")
	found, err = a.History.List("100%", 10, 0)
	require.NoError(t, err)
	require.Empty(t, found, "LIKE wildcards in a query match literally")

	// Re-transcription with a model named by path; the loaded model is
	// reused when it is the same file.
	kitPath, _, err := a.Models.resolveSpeech("kit")
	require.NoError(t, err)
	loads := a.rt.Loads(kitPath)
	_, err = a.History.Retranscribe(job.ID, "kit")
	require.NoError(t, err)
	n := 0
	again := ev.wait(t, "transcription:done", func(d any) bool {
		if d.(Job).ID == job.ID {
			n++
		}
		return n == 2
	}, 60*time.Second).(Job)
	require.Equal(t, JobDone, again.Status, again.Error)
	require.Equal(t, want, again.Text)
	require.Equal(t, loads, a.rt.Loads(kitPath), "the speech model stays loaded between jobs")

	jobs, err := a.Transcription.Jobs()
	require.NoError(t, err)
	require.Len(t, jobs, 2)

	// Bad input.
	_, err = a.Files.Add(shared.Path(t, "audio", "jfk.txt"), "")
	require.NoError(t, err, "a file is queued without decoding it up front")
	bad := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).Name == "jfk.txt" }, 30*time.Second).(Job)
	require.Equal(t, JobFailed, bad.Status)
	require.NotEmpty(t, bad.Error)
	_, err = a.Files.Add("/no/such/file.wav", "")
	require.Error(t, err)
	_, err = a.Files.Add(clip, "no-such-model")
	require.Error(t, err)
}

func TestTranscriptionCancel(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	// Cancel the running job from its first progress event, and a queued
	// one before it starts.
	var first atomic.Int64
	ev.hook = func(name string, d any) {
		if p, ok := d.(Progress); ok && name == "transcription:progress" && p.ID == first.Load() {
			a.Transcription.Cancel(p.ID)
		}
	}
	long := shared.Path(t, "audio", "ljspeech-longform-LJ001-0021-0076.wav")
	j1, err := a.Files.Add(long, "")
	require.NoError(t, err)
	first.Store(j1.ID)
	j2, err := a.Files.Add(shared.Path(t, "audio", "jfk.wav"), "")
	require.NoError(t, err)
	require.NoError(t, a.Transcription.Cancel(j2.ID))
	d2 := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == j2.ID }, 10*time.Second).(Job)
	require.Equal(t, JobCanceled, d2.Status)
	d1 := ev.wait(t, "transcription:done", func(d any) bool { return d.(Job).ID == j1.ID }, 60*time.Second).(Job)
	require.Equal(t, JobCanceled, d1.Status)

	for _, id := range []int64{j1.ID, j2.ID} {
		it, err := a.History.Get(id)
		require.NoError(t, err)
		require.Equal(t, StatusRecorded, it.Status, "a canceled file waits in Pending")
	}
	p, err := a.History.Pending()
	require.NoError(t, err)
	require.Len(t, p, 2)
	require.Error(t, a.Transcription.Cancel(j1.ID), "nothing left to cancel")
}
