package app

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// TestMeetingResume: a meeting a killed process left recording (the call,
// jfk, on the system channel, a marker, and a torn last write) is made
// whole at start and offered, not finished, also after a restart.
// Resumed, it records into the same file after what was kept: the live
// transcript's words come at their true times (after the first part), the
// recording's length is the two parts', the first part is intact, the
// marker is kept, and the final pass's notes hold words from both parts
// at their times.
func TestMeetingResume(t *testing.T) {
	dataDir := t.TempDir()
	root := filepath.Join(dataDir, "meetings")
	crashed, call := crashedMeeting(t, root)
	_, err := crashed.AddMarker(1, "before the crash")
	require.NoError(t, err)
	id, cut := crashed.ID(), float64(len(call))/16000
	f, err := os.OpenFile(filepath.Join(crashed.Dir(), meeting.AudioName), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{1, 2, 3}) // the write in flight when it was killed
	require.NoError(t, err)
	require.NoError(t, f.Close())

	a, _ := meetingApp(t, dataDir, nil)
	st := a.Meetings.Status()
	require.Equal(t, []string{id}, offerIDs(st))
	require.InDelta(t, cut, st.Offers[0].Seconds, 1e-9)
	require.False(t, st.Offers[0].CutAt.IsZero())
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Empty(t, items, "offered, not finished behind the user's back")
	require.NoError(t, a.Close())

	// Unanswered, it is offered again at the next start.
	ev := newEvents()
	a, play := meetingApp(t, dataDir, ev)
	require.Equal(t, []string{id}, offerIDs(a.Meetings.Status()))
	_, err = a.Meetings.Resume("20200101-000000")
	require.ErrorContains(t, err, "no meeting 20200101-000000")
	st, err = a.Meetings.Resume("")
	require.NoError(t, err)
	require.Equal(t, MeetingRecording, st.State)
	require.Equal(t, id, st.ID)
	require.Empty(t, st.Offers)
	require.InDelta(t, cut, st.Seconds, 1e-9, "the timeline goes on at the length recorded")
	_, err = a.Meetings.Resume(id)
	require.ErrorContains(t, err, "is recording")
	play(0) // 13 s: the call again, and the user over it

	st, err = a.Meetings.Stop()
	require.NoError(t, err)
	require.Equal(t, []meeting.Marker{{At: 1, Text: "before the crash"}}, st.Markers)
	var you []meeting.Line
	for _, l := range st.Lines {
		if l.Speaker == "You" {
			you = append(you, l)
		}
	}
	require.NotEmpty(t, you)
	require.GreaterOrEqual(t, you[0].Start, cut, "the live transcript's words at their true times")
	meta, err := meeting.Read(root, id)
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, meta.State)
	rec, err := audio.Open(filepath.Join(meeting.Dir(root, id), meeting.AudioName))
	require.NoError(t, err)
	got, err := audio.ReadAll(rec)
	rec.Close()
	require.NoError(t, err)
	n := len(got) / 2
	require.InDelta(t, float64(n)/16000, meta.Duration, 1e-9)
	require.GreaterOrEqual(t, n, len(call)+12*16000, "the resumed part follows the first")
	require.LessOrEqual(t, n, len(call)+13*16000)
	for i, x := range call {
		if d := got[2*i+1] - x; d > 1.0/32767 || d < -1.0/32767 {
			t.Fatalf("the first part's frame %d: got %v, want %v", i, got[2*i+1], x)
		}
	}

	done := meetingDone(t, ev, st.Item)
	require.Equal(t, StatusDone, done.Status, done.Error)
	notes, err := readMeetingNotes(meeting.Dir(root, id))
	require.NoError(t, err)
	require.True(t, notes.Final)
	require.Equal(t, st.Markers, notes.Markers)
	var before, after bool
	for _, l := range notes.Lines {
		t.Logf("[%.1f-%.1f] %s: %s", l.Start, l.End, l.Speaker, l.Text)
		text := strings.ToLower(l.Text)
		before = before || l.Speaker == "Others" && l.Start < cut && strings.Contains(text, "fellow americans")
		after = after || l.Speaker == "You" && l.Start >= cut && strings.Contains(text, "ill disposed young man")
	}
	require.True(t, before, "the first part's words, at their times")
	require.True(t, after, "the resumed part's words, after the first part")
	_, err = a.Meetings.Finish(id)
	require.ErrorContains(t, err, "finished already")
}

// crashedMeeting leaves a meeting under root as a killed process leaves
// it, started an hour ago: recording, with the call (jfk, returned) on the
// system channel and the microphone silent.
func crashedMeeting(t *testing.T, root string) (*meeting.Recorder, []float32) {
	t.Helper()
	call, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	r, err := meeting.Start(meeting.RecorderConfig{Root: root}, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	frames := make([]float32, 0, 2*len(call))
	for _, x := range call {
		frames = append(frames, 0, x) // {You, Others}
	}
	r.Write(frames) // and never stopped
	return r, call
}

// TestMeetingResumeAfterMeetings is the Meeting view's session at the Go
// level (TestBrowserMeeting): of two meetings a crash cut short, one is
// finished from its offer, a meeting is recorded, stopped and summarized,
// then the other is resumed, records a few seconds of silence, and is
// stopped: its final pass ends within a bound (else every goroutine's
// stack is logged), the meeting is finished and longer than what it kept,
// and the last status the view is told says the pass is over.
func TestMeetingResumeAfterMeetings(t *testing.T) {
	dataDir := t.TempDir()
	root := filepath.Join(dataDir, "meetings")
	crashed, _ := crashedMeeting(t, root)
	other, err := meeting.Start(meeting.RecorderConfig{Root: root}, time.Now().Add(-2*time.Hour))
	require.NoError(t, err)
	other.Write(make([]float32, 2*16000)) // and abandoned

	ev := newEvents()
	a, play := meetingAppDevices(t, dataDir, ev)
	st, err := a.Meetings.Finish(crashed.ID())
	require.NoError(t, err)
	require.Equal(t, StatusDone, meetingDone(t, ev, st.Item).Status)

	_, err = a.Meetings.Start()
	require.NoError(t, err)
	play(func(d map[string]*pushDevice, tick func(time.Duration)) { playMeeting(t, d, 16000, tick) })
	st, err = a.Meetings.Stop()
	require.NoError(t, err)
	require.Equal(t, StatusDone, meetingDone(t, ev, st.Item).Status)
	// (the entry is done just before the pass lets go of it: Summarize
	// waits for the status that says so, as the view's button does)
	ev.wait(t, EventMeetingStatus, func(d any) bool { s := d.(MeetingStatus); return s.Item == st.Item && !s.Finishing }, time.Minute)
	var done []float64 // its final pass's progress, as the view is told it
	for _, d := range ev.named(EventMeetingProgress) {
		if p := d.(PassProgress); p.Item == st.Item {
			require.True(t, p.Done >= 0 && p.Done <= 1, "progress %v", p.Done)
			done = append(done, p.Done)
		}
	}
	require.GreaterOrEqual(t, len(done), 2, "a channel's windows, then the next")
	require.Equal(t, 1.0, done[len(done)-1])
	a.Meetings.mu.Lock()
	a.Meetings.summaryTokens = 16
	a.Meetings.mu.Unlock()
	_, err = a.Meetings.Summarize(st.Item)
	require.NoError(t, err)
	ev.wait(t, EventMeetingStatus, func(d any) bool { s := d.(MeetingStatus); return !s.Summarizing && (s.Summary != "" || s.Error != "") },
		5*time.Minute)

	st, err = a.Meetings.Resume(other.ID())
	require.NoError(t, err)
	require.Equal(t, MeetingRecording, st.State)
	play(func(d map[string]*pushDevice, tick func(time.Duration)) {
		for range 400 { // 4 s in 10-ms frames
			tick(10 * time.Millisecond)
			d["mic"].onData(make([]float32, 160))
			d["mon"].onData(make([]float32, 160))
		}
	})
	st, err = a.Meetings.Stop()
	require.NoError(t, err)
	require.True(t, st.Finishing)
	for deadline := time.Now().Add(shared.Wait(t, 2*time.Minute)); a.Meetings.Status().Finishing; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			var b strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
			t.Fatalf("the resumed meeting's final pass did not end:\n%s", b.String())
		}
	}
	it, err := a.History.Get(st.Item)
	require.NoError(t, err)
	require.Equal(t, StatusDone, it.Status, it.Error)
	meta, err := meeting.Read(root, other.ID())
	require.NoError(t, err)
	require.Equal(t, meeting.StateFinished, meta.State)
	require.Greater(t, meta.Duration, 4.5, "what it kept (1 s) and the 4 s after")
	sts := ev.named(EventMeetingStatus)
	last := sts[len(sts)-1].(MeetingStatus)
	require.Equal(t, st.Item, last.Item)
	require.False(t, last.Finishing, "the view is told the pass is over")
	// Stop's reply may reach the view after that event (the bridge sends
	// them by different ways): its Rev is the older, and the view keeps
	// the newer. Every status event comes with a larger Rev than the last.
	require.Less(t, st.Rev, last.Rev)
	for i := 1; i < len(sts); i++ {
		require.Greater(t, sts[i].(MeetingStatus).Rev, sts[i-1].(MeetingStatus).Rev)
	}
}
