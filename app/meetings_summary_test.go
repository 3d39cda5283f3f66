package app

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/meeting"
)

// fakeSummarizer answers at once, or (block) only when its time is up.
type fakeSummarizer struct {
	block bool
	kept  int
	lines []string
	max   int
}

func (f *fakeSummarizer) summarize(ctx context.Context, lines []string, maxTokens int) (string, int, error) {
	f.lines, f.max = lines, maxTokens
	if f.block {
		<-ctx.Done()
		return "", 0, ctx.Err()
	}
	return "- ship it", f.kept, nil
}

// TestMeetingSummaryBounds: Summarize hands the summarizer the notes'
// speaker lines and the token bound, and keeps its summary in the notes,
// saying how far it goes when the transcript did not fit; one past the
// time limit is stopped and changes nothing; a meeting with nothing said,
// or an entry that is none, is refused. (TestMeetingsInHistory has the
// chat model write one.)
func TestMeetingSummaryBounds(t *testing.T) {
	dataDir := t.TempDir()
	ev := newEvents()
	a, _ := meetingApp(t, dataDir, ev)
	root := filepath.Join(dataDir, "meetings")
	r, err := meeting.Start(meeting.RecorderConfig{Root: root}, time.Now())
	require.NoError(t, err)
	r.Write(make([]float32, 3200))
	meta, err := r.Stop()
	require.NoError(t, err)
	dir := meeting.Dir(root, meta.ID)
	notes := meeting.Notes{Title: "Weekly", Lines: []meeting.Line{
		{Speaker: "You", Start: 0, End: 1, Text: "Ship it."}, {Speaker: "Others", Start: 61, End: 62, Text: "Agreed."}}}
	require.NoError(t, writeMeetingNotes(dir, notes))
	it, err := a.History.addMeeting(meetingItem(dir, meta, notes, StatusDone))
	require.NoError(t, err)

	fake := &fakeSummarizer{kept: 1}
	m := a.Meetings
	m.mu.Lock()
	m.deps.summarizer, m.summaryTokens, m.lastItem = fake, 40, it.ID
	m.mu.Unlock()
	st, err := m.Summarize(it.ID)
	require.NoError(t, err)
	require.True(t, st.Summarizing)
	st = ev.wait(t, EventMeetingStatus, func(d any) bool { s := d.(MeetingStatus); return !s.Summarizing && s.Summary != "" },
		time.Minute).(MeetingStatus)
	require.Equal(t, []string{"You: Ship it.", "Others: Agreed."}, fake.lines)
	require.Equal(t, 40, fake.max)
	want := "- ship it\n\n(This summary covers the meeting up to 1m1s: the rest did not fit the chat model's context.)"
	require.Equal(t, want, st.Summary)
	got, err := readMeetingNotes(dir)
	require.NoError(t, err)
	require.Equal(t, want, got.Summary)
	md, err := m.Export(it.ID, meeting.FormatMarkdown)
	require.NoError(t, err)
	require.Contains(t, md, "## Summary\n\n- ship it\n")

	// Past the time limit: stopped, the summary kept as it was.
	m.mu.Lock()
	m.deps.summarizer, m.summaryLimit = &fakeSummarizer{block: true}, 50*time.Millisecond
	m.mu.Unlock()
	_, err = m.Summarize(it.ID)
	require.NoError(t, err)
	st = ev.wait(t, EventMeetingStatus, func(d any) bool { return d.(MeetingStatus).Error != "" }, time.Minute).(MeetingStatus)
	require.Contains(t, st.Error, "the summary took longer than 50ms")
	require.False(t, st.Summarizing)
	got, err = readMeetingNotes(dir)
	require.NoError(t, err)
	require.Equal(t, want, got.Summary)

	// Nothing said; not a meeting.
	require.NoError(t, writeMeetingNotes(dir, meeting.Notes{Title: "Weekly"}))
	_, err = m.Summarize(it.ID)
	require.ErrorContains(t, err, "nothing was said")
	_, err = m.Summarize(it.ID + 100)
	require.Error(t, err)
}
