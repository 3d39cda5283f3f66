package meeting

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecorderResume: a meeting a dead process left recording is made
// whole without being finished (interrupted, still unfinished, cut short
// at its file's last write), then resumed: the new frames are appended to
// the same file, the timeline going on at the length recorded, and the
// markers are kept. Resuming or finishing a finished meeting, or an
// unknown one, is an error.
func TestRecorderResume(t *testing.T) {
	root := t.TempDir()
	started := time.Now().Add(-time.Hour)
	r, err := Start(RecorderConfig{Root: root}, started)
	require.NoError(t, err)
	r.Write(frames(0, 3*1600))
	_, err = r.AddMarker(0.1, "before the crash")
	require.NoError(t, err)
	id := r.ID()
	// r is abandoned, as a killed process leaves it.

	m, err := Interrupt(root, id)
	require.NoError(t, err)
	require.Equal(t, StateInterrupted, m.State)
	require.False(t, m.Recovered)
	require.InDelta(t, 0.3, m.Duration, 1e-9)
	require.False(t, m.CutAt.Before(started), "cut short after it started")
	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1, "an interrupted meeting stays unfinished: it is offered again")
	again, err := Interrupt(root, id)
	require.NoError(t, err)
	require.Equal(t, StateInterrupted, again.State)
	require.Equal(t, m.Duration, again.Duration)
	require.True(t, m.CutAt.Equal(again.CutAt), "interrupting it again changes nothing")

	r, err = Resume(RecorderConfig{Root: root}, id)
	require.NoError(t, err)
	require.Equal(t, int64(3*1600), r.Frames())
	require.Equal(t, []Marker{{At: 0.1, Text: "before the crash"}}, r.Markers())
	r.Write(frames(3*1600, 2*1600))
	_, err = r.AddMarker(float64(r.Frames())/rate, "after")
	require.NoError(t, err)
	un, err = Unfinished(root)
	require.NoError(t, err)
	require.Equal(t, StateRecording, un[0].State)
	m, err = r.Stop()
	require.NoError(t, err)
	require.Equal(t, StateFinished, m.State)
	require.InDelta(t, 0.5, m.Duration, 1e-9)
	require.Equal(t, []Marker{{At: 0.1, Text: "before the crash"}, {At: 0.5, Text: "after"}}, m.Markers)
	require.True(t, m.Started.Equal(started))
	requireFrames(t, frames(0, 5*1600), loadFrames(t, Dir(root, id)))

	_, err = Resume(RecorderConfig{Root: root}, id)
	require.ErrorIs(t, err, ErrFinished)
	_, err = Finish(root, id)
	require.ErrorIs(t, err, ErrFinished)
	_, err = Resume(RecorderConfig{Root: root}, "20200101-000000")
	require.Error(t, err)
	_, err = Resume(RecorderConfig{Root: root}, "../x")
	require.ErrorContains(t, err, "invalid id")

	// Finishing an interrupted meeting marks it recovered.
	r, err = Start(RecorderConfig{Root: root}, time.Now())
	require.NoError(t, err)
	r.Write(frames(0, 1600))
	_, err = Interrupt(root, r.ID())
	require.NoError(t, err)
	m, err = Finish(root, r.ID())
	require.NoError(t, err)
	require.Equal(t, StateFinished, m.State)
	require.True(t, m.Recovered)
	require.InDelta(t, 0.1, m.Duration, 1e-9)
}
