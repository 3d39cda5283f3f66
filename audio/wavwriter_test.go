package audio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// TestWAVSurvivesKill writes a recording from a child process that is
// killed with SIGKILL mid-write; the file must decode, holding what was
// written.
func TestWAVSurvivesKill(t *testing.T) {
	if os.Getenv("HARK_WAV_CHILD") != "" {
		w, err := CreateWAV(os.Getenv("HARK_WAV_CHILD"), 16000)
		if err != nil {
			os.Exit(2)
		}
		for i := 0; ; i++ {
			if err := w.Write(shared.Ramp(i*160, 160)); err != nil {
				os.Exit(3)
			}
			if i == 300 {
				os.Stdout.WriteString("ready\n")
			}
			time.Sleep(time.Millisecond)
		}
	}
	path := filepath.Join(t.TempDir(), "crash.wav")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWAVSurvivesKill$")
	cmd.Env = append(os.Environ(), "HARK_WAV_CHILD="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 6)
	_, err = out.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(buf))
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	got, err := Load16k(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(got), 301*160, "samples written before the kill are there")
	require.Zero(t, len(got)%160, "whole writes only: the header never runs ahead of the data")
	want := shared.Ramp(0, len(got))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1.0/32767, "sample %d of %d", i, len(got))
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("killed writer left %d samples (%s bytes)", len(got), strconv.FormatInt(st.Size(), 10))
}

func TestWAVWriterErrors(t *testing.T) {
	_, err := CreateWAV(filepath.Join(t.TempDir(), "no", "such", "dir.wav"), 16000)
	require.Error(t, err)
	_, err = CreateWAV(filepath.Join(t.TempDir(), "x.wav"), 0)
	require.Error(t, err)
	w, err := CreateWAV(filepath.Join(t.TempDir(), "x.wav"), 16000)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Error(t, w.Write([]float32{0}))
}
