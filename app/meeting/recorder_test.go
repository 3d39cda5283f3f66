package meeting

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

const rate = 16000

// frames makes n interleaved frames from frame start: You is a ramp,
// Others its negation, so a lost, repeated or swapped frame shows.
func frames(start, n int) []float32 {
	r := shared.Ramp(start, n)
	x := make([]float32, 0, 2*n)
	for _, v := range r {
		x = append(x, v, -v)
	}
	return x
}

// loadFrames reads a meeting's audio back.
func loadFrames(t *testing.T, dir string) []float32 {
	s, err := audio.Open(filepath.Join(dir, AudioName))
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 2, s.Channels())
	x, err := audio.ReadAll(s)
	require.NoError(t, err)
	return x
}

func requireFrames(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if d := want[i] - got[i]; d > 1.0/32767 || d < -1.0/32767 {
			t.Fatalf("sample %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// TestRecorderSurvivesKill records from a child process killed with
// SIGKILL mid-meeting: the next start finds the meeting unfinished, and
// finishing it keeps every frame the child had written (at most the write
// in flight, 100 ms here, is lost).
func TestRecorderSurvivesKill(t *testing.T) {
	if root := os.Getenv("HARK_MEETING_CHILD"); root != "" {
		r, err := Start(RecorderConfig{Root: root}, time.Now())
		if err != nil {
			os.Exit(2)
		}
		// It stops writing at 5 s and waits for the kill with the meeting
		// open: a child still writing when the signal lands would be ahead of
		// the count the parent read, by however far a loaded machine let the
		// pipe fill (a CI run recovered 203,200 frames for 80,000 read).
		for i := 0; r.Frames() < 5*rate; i++ {
			r.Write(frames(i*1600, 1600)) // 100 ms, as audio/meeting hands them on
			os.Stdout.WriteString("wrote " + strconv.FormatInt(r.Frames(), 10) + "\n")
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Hour)
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRecorderSurvivesKill$")
	cmd.Env = append(os.Environ(), "HARK_MEETING_CHILD="+root)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	written := int64(0)
	for written < 5*rate && sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "wrote "); ok {
			written, err = strconv.ParseInt(n, 10, 64)
			require.NoError(t, err)
		}
	}
	require.GreaterOrEqual(t, written, int64(5*rate), "the child stopped early")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1, "the killed meeting is found unfinished")
	m, err := Finish(root, un[0].ID)
	require.NoError(t, err)
	require.True(t, m.Recovered)
	require.Equal(t, StateFinished, m.State)
	un, err = Unfinished(root)
	require.NoError(t, err)
	require.Empty(t, un)

	got := loadFrames(t, Dir(root, m.ID))
	n := len(got) / 2
	t.Logf("child reported %d frames written; %d recovered (%.2f s)", written, n, m.Duration)
	require.GreaterOrEqual(t, int64(n), written, "frames the child had written are lost")
	require.LessOrEqual(t, int64(n), written+2*1600, "more frames than the child wrote")
	require.InDelta(t, float64(n)/rate, m.Duration, 1e-9)
	requireFrames(t, frames(0, n), got)
}

// fullDisk is a recording file whose writes fail with ENOSPC while full is
// set, as on a disk that fills during a meeting and is then cleared.
type fullDisk struct {
	*os.File
	mu   sync.Mutex
	full bool
}

func (f *fullDisk) set(full bool) { f.mu.Lock(); f.full = full; f.mu.Unlock() }

func (f *fullDisk) WriteAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

// TestRecorderDiskFull: the first refused write tells the user at once
// (once per outage); the audio waits in memory and reaches the file when
// space returns, in order; beyond MaxBacklog the oldest is given up and
// counted.
func TestRecorderDiskFull(t *testing.T) {
	root := t.TempDir()
	var disk *fullDisk
	var told []error
	r, err := Start(RecorderConfig{Root: root, MaxBacklog: 3 * time.Second,
		OnSaveError: func(err error) { told = append(told, err) },
		CreateFile: func(path string) (audio.WAVFile, error) {
			f, err := audio.CreateFile(path)
			if err != nil {
				return nil, err
			}
			disk = &fullDisk{File: f.(*os.File)}
			return disk, nil
		}}, time.Now())
	require.NoError(t, err)
	pos := 0
	write := func(secs int) {
		for range secs * 10 {
			r.Write(frames(pos, 1600))
			pos += 1600
		}
	}
	write(1)
	disk.set(true)
	r.Write(frames(pos, 1600))
	pos += 1600
	require.Len(t, told, 1, "the full disk is reported on the first refused write")
	require.ErrorIs(t, told[0], syscall.ENOSPC)
	write(2) // 2.1 s held: within the backlog
	disk.set(false)
	write(1)
	require.Len(t, told, 1, "one report per outage")
	require.Equal(t, int64(pos), r.Frames(), "the backlog reached the file")

	disk.set(true)
	write(5) // 5 s against a 3 s backlog: 2 s given up
	require.Len(t, told, 2, "a new outage is reported again")
	disk.set(false)
	m, err := r.Stop()
	require.NoError(t, err)
	require.InDelta(t, 2.0, m.LostSeconds, 0.01)
	require.Contains(t, m.SaveError, "no space left")
	got := loadFrames(t, r.Dir())
	kept := 4*rate + 1600
	want := append(frames(0, kept), frames(kept+2*rate, 3*rate)...)
	requireFrames(t, want, got)
	require.InDelta(t, float64(len(want)/2)/rate, m.Duration, 1e-9)
}

// TestRecorderMarkers: markers reach meta.json at once (a crash keeps
// them) and stay in the finished meeting.
func TestRecorderMarkers(t *testing.T) {
	root := t.TempDir()
	r, err := Start(RecorderConfig{Root: root}, time.Now())
	require.NoError(t, err)
	r.Write(frames(0, 1600))
	_, err = r.AddMarker(0.05, "  decision: ship it\n")
	require.NoError(t, err)
	// Bad markers are refused and change nothing.
	for _, bad := range []string{"", " \t", strings.Repeat("é", MaxMarkerText+1), "\xff\xfe"} {
		_, err = r.AddMarker(0.1, bad)
		require.Error(t, err, "%q", bad)
	}
	_, err = r.AddMarker(math.NaN(), "when?")
	require.Error(t, err)
	require.Equal(t, []Marker{{At: 0.05, Text: "decision: ship it"}}, r.Markers())
	un, err := Unfinished(root)
	require.NoError(t, err)
	require.Len(t, un, 1)
	require.Equal(t, []Marker{{At: 0.05, Text: "decision: ship it"}}, un[0].Markers)
	m, err := r.Stop()
	require.NoError(t, err)
	require.Equal(t, un[0].Markers, m.Markers)
	all, err := List(root)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, m.ID, all[0].ID)
	require.Equal(t, StateFinished, all[0].State)
	require.Equal(t, m.Markers, all[0].Markers)

	// A meeting holds at most MaxMarkers.
	r, err = Start(RecorderConfig{Root: root}, time.Now())
	require.NoError(t, err)
	for i := range MaxMarkers {
		_, err = r.AddMarker(float64(i), "m")
		require.NoError(t, err)
	}
	_, err = r.AddMarker(0, "one too many")
	require.ErrorContains(t, err, "at most")
	require.Len(t, r.Markers(), MaxMarkers)
	_, err = r.Stop()
	require.NoError(t, err)
}
