package app

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// meetingDone waits for the meeting entry id (0: any) to finish its final
// pass.
func meetingDone(t *testing.T, ev *events, id int64) Item {
	t.Helper()
	return ev.wait(t, EventHistoryChanged, func(d any) bool {
		it := d.(Item)
		return it.Kind == KindMeeting && (id == 0 || it.ID == id) && it.Status != StatusTranscribing && it.Status != StatusRecorded
	}, 10*time.Minute).(Item)
}

// TestMeetingsInHistory: meetings become History entries found by its
// search, with the final pass's transcript. A meeting a crash cut short
// (the call, jfk, on the system channel) is made whole at start and
// offered; finished, it is added and transcribed by its final pass. A
// meeting recorded then stopped is added with its live transcript, which
// the final pass replaces; a dictation asking for the model during the
// pass gets it before the pass's next window. Deleting an entry removes the meeting's folder.
func TestMeetingsInHistory(t *testing.T) {
	dataDir := t.TempDir()
	root := filepath.Join(dataDir, "meetings")
	crashed, _ := crashedMeeting(t, root)

	ev := newEvents()
	a, play := meetingApp(t, dataDir, ev)

	// The crashed meeting: offered, then finished: in History,
	// transcribed.
	require.Equal(t, []string{crashed.ID()}, offerIDs(a.Meetings.Status()))
	fst, err := a.Meetings.Finish(crashed.ID())
	require.NoError(t, err)
	require.Empty(t, fst.Offers)
	require.True(t, fst.Finishing)
	rec := meetingDone(t, ev, fst.Item)
	require.Equal(t, StatusDone, rec.Status, rec.Error)
	require.Equal(t, filepath.Join(meeting.Dir(root, crashed.ID()), meeting.AudioName), rec.AudioPath)
	require.Contains(t, strings.ToLower(rec.Text), "others: and so my fellow americans")
	found, err := a.History.List("fellow americans", 10, 0)
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, rec.ID, found[0].ID)
	srt, err := a.History.Export(rec.ID, whisper.FormatSRT)
	require.NoError(t, err)
	require.Contains(t, srt, "Others: ")
	notes, err := readMeetingNotes(meeting.Dir(root, crashed.ID()))
	require.NoError(t, err)
	require.True(t, notes.Final)
	pending, err := a.History.Pending()
	require.NoError(t, err)
	require.Empty(t, pending, "a meeting is not a pending dictation")

	// A recorded meeting; during its final pass a dictation asks for the
	// speech model at its first window.
	kit, _, err := a.Models.resolveSpeech("")
	require.NoError(t, err)
	var windows atomic.Int32
	var atDictation atomic.Int32
	dictated := make(chan error, 1)
	a.Meetings.mu.Lock()
	a.Meetings.passWindow = func() {
		if windows.Add(1) != 1 {
			return
		}
		go func() {
			m, err := a.rt.Speech(t.Context(), kit, runtime.Dictation)
			if err == nil {
				atDictation.Store(windows.Load())
				m.Release()
			}
			dictated <- err
		}()
		// Return (to the pass's yield) once the dictation waits.
		for {
			for _, l := range a.rt.Loaded() {
				if l.Path == kit && l.Waiting > 0 {
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	a.Meetings.mu.Unlock()
	_, err = a.Meetings.AddMarker("too early")
	require.ErrorContains(t, err, "no meeting is recording")
	_, err = a.Meetings.Start()
	require.NoError(t, err)
	// The user from 0 s: the kit model knows its clip only from a
	// window's start (it is no speech recogniser).
	play(0)
	mst, err := a.Meetings.AddMarker("  budget *agreed*  ")
	require.NoError(t, err)
	require.Len(t, mst.Markers, 1)
	require.Equal(t, "budget *agreed*", mst.Markers[0].Text)
	// At the audio on disk then (the capture hands frames on as it aligns
	// them, so not necessarily all that was played).
	require.GreaterOrEqual(t, mst.Markers[0].At, 0.0)
	require.LessOrEqual(t, mst.Markers[0].At, mst.Seconds)
	_, err = a.Meetings.AddMarker(strings.Repeat("x", meeting.MaxMarkerText+1))
	require.Error(t, err)
	st, err := a.Meetings.Stop()
	require.NoError(t, err)
	require.NotZero(t, st.Item)
	require.Equal(t, MeetingIdle, st.State)
	require.False(t, st.Final)
	require.Equal(t, mst.Markers, st.Markers)
	// The view's live lines, put together from the events, are the
	// live notes' lines.
	var viewed []meeting.Line
	for _, d := range ev.named(EventMeetingLines) {
		ml := d.(MeetingLines)
		require.LessOrEqual(t, ml.From, len(viewed))
		viewed = append(viewed[:ml.From], ml.Lines...)
	}
	require.NotEmpty(t, viewed)
	require.Equal(t, st.Lines, viewed)
	live, err := a.History.Get(st.Item)
	require.NoError(t, err)
	require.Equal(t, KindMeeting, live.Kind)
	require.Contains(t, strings.ToLower(live.Text), "you: he was not an ill disposed young man", "the live transcript stands meanwhile")
	done := meetingDone(t, ev, st.Item)
	require.Equal(t, StatusDone, done.Status, done.Error)
	require.NoError(t, <-dictated)
	require.Equal(t, int32(1), atDictation.Load(), "the dictation got the model before the pass decoded its first channel")
	require.Greater(t, windows.Load(), int32(1), "the pass went on after the dictation")
	dir := filepath.Dir(st.Notes)
	notes, err = readMeetingNotes(dir)
	require.NoError(t, err)
	require.True(t, notes.Final, "the final pass replaced the live notes")
	md, err := os.ReadFile(st.Notes)
	require.NoError(t, err)
	require.Contains(t, strings.ToLower(string(md)), "you:** he was not an ill disposed young man")
	// The view hears of the final text, and exports the notes.
	fin := ev.wait(t, EventMeetingStatus, func(d any) bool { s := d.(MeetingStatus); return s.Item == st.Item && s.Final && !s.Finishing },
		time.Minute).(MeetingStatus)
	require.Equal(t, st.Item, fin.Item)
	var finText []string
	for _, l := range fin.Lines {
		finText = append(finText, l.Speaker+": "+l.Text)
	}
	require.Contains(t, strings.ToLower(strings.Join(finText, "\n")), "you: he was not an ill disposed young man")
	exported, err := a.Meetings.Export(st.Item, meeting.FormatMarkdown)
	require.NoError(t, err)
	require.Equal(t, string(md), exported)
	require.Contains(t, exported, "] budget \\*agreed\\*")
	vtt, err := a.Meetings.Export(st.Item, whisper.FormatVTT)
	require.NoError(t, err)
	require.Contains(t, vtt, "<v You>")
	_, err = a.Meetings.Export(st.Item, "pdf")
	require.ErrorContains(t, err, "unknown notes format")
	_, err = a.Meetings.Export(st.Item+100, meeting.FormatMarkdown)
	require.Error(t, err)
	// A summary by the chat model (stories260K), bounded in length.
	a.Meetings.mu.Lock()
	a.Meetings.summaryTokens = 48
	a.Meetings.mu.Unlock()
	_, err = a.Meetings.Summarize(st.Item)
	require.NoError(t, err)
	sum := ev.wait(t, EventMeetingStatus, func(d any) bool { s := d.(MeetingStatus); return !s.Summarizing && (s.Summary != "" || s.Error != "") },
		5*time.Minute).(MeetingStatus)
	require.Empty(t, sum.Error)
	t.Logf("summary: %q", sum.Summary)
	notes, err = readMeetingNotes(dir)
	require.NoError(t, err)
	require.Equal(t, sum.Summary, notes.Summary)
	chatPath, _, err := a.Models.resolveChat("")
	require.NoError(t, err)
	require.NoError(t, a.Models.withChat(t.Context(), chatPath, func(m *runtime.LLMModel) error {
		require.LessOrEqual(t, len(m.Gen.Tk.Encode(sum.Summary, false)), 48+2, "the summary is bounded (the tokens re-encoded, trimmed)")
		return nil
	}))
	found, err = a.History.List("ill disposed", 10, 0)
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, st.Item, found[0].ID)
	require.Contains(t, strings.ToLower(found[0].Text), "others: and so my fellow americans")

	// Deleting the entry removes the meeting's folder.
	require.NoError(t, a.History.Delete(st.Item))
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
	metas, err := a.Meetings.List()
	require.NoError(t, err)
	require.Len(t, metas, 1)
	require.Equal(t, crashed.ID(), metas[0].ID)

	// An entry whose path is not a meeting's folder is refused, and
	// nothing is removed.
	bad := rec
	bad.AudioPath = filepath.Join(dataDir, "hark.db")
	require.NoError(t, a.History.save(bad))
	require.ErrorContains(t, a.History.Delete(rec.ID), "not a meeting's recording")
	_, err = a.Meetings.Export(rec.ID, meeting.FormatMarkdown)
	require.ErrorContains(t, err, "not a meeting's recording", "nor does its export read there")
	_, err = os.Stat(filepath.Join(dataDir, "hark.db"))
	require.NoError(t, err)
}
