package whisper

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/shared"
)

// The spectrogram FileSpectrogram spools to disk and reads back a window
// at a time is the whole-file LogMel of the long-form file, bit for bit.
func TestFileSpectrogramEqualsWhole(t *testing.T) {
	t.Parallel()
	f, _ := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	path := shared.Path(t, "audio", longformAudio)
	x, err := audio.Load16k(path)
	require.NoError(t, err)
	filters, err := mel.NewMelFilters(int(f.Mel.NMel), f.Mel.Data)
	require.NoError(t, err)
	want, err := mel.LogMel(x, filters, WindowSecs*SampleRate)
	require.NoError(t, err)
	got, err := f.FileSpectrogram(path, 0)
	require.NoError(t, err)
	defer got.Close()
	require.Equal(t, want.NFrames, got.NFrames)
	require.Equal(t, want.Peak, got.Peak)
	w, g := make([]float32, want.NMels*ChunkFrames), make([]float32, want.NMels*ChunkFrames)
	for start := 0; start < want.NFrames; start += 1234 {
		n := min(ChunkFrames, want.NFrames-start)
		require.NoError(t, want.ReadWindow(w, start, n, ChunkFrames))
		require.NoError(t, got.ReadWindow(g, start, n, ChunkFrames))
		require.Equal(t, w, g, "window at frame %d", start)
	}
}

// memChild names the WAV a child process of TestLongFileMemoryFlat
// transcribes.
const memChild = "HARK_MEMTEST_WAV"

// memWindows is how many windows each child transcribes.
const memWindows = 3

// Transcribing 40 minutes of speech holds no more memory than 10 minutes:
// the live heap at every window (after a collection, so it counts only
// what is held) and the process's peak RSS (VmHWM), each measured in a
// process of its own, barely grow. Before the spectrogram was spooled,
// the 40-minute file held 58 MB more of it through the whole run. The
// real file path runs, cut short to keep CI cheap: the whole file is
// decoded and its spectrogram computed (the pass that held it all), then
// the first memWindows windows are transcribed greedily, without
// timestamps, at most 4 tokens each. (TestFileSpectrogramEqualsWhole and
// the long-form tests read every window.) Each measure is a process of its
// own, so the test runs in parallel with the others.
func TestLongFileMemoryFlat(t *testing.T) {
	t.Parallel()
	if p := os.Getenv(memChild); p != "" {
		memoryChild(t, p)
		return
	}
	x, err := audio.Load16k(shared.Path(t, "audio", longformAudio))
	require.NoError(t, err)
	dir := t.TempDir()
	type usage struct{ windows, heap, hwm int64 }
	measure := func(minutes int) usage {
		path := filepath.Join(dir, fmt.Sprintf("%dmin.wav", minutes))
		w, err := audio.CreateWAV(path, SampleRate)
		require.NoError(t, err)
		for left := minutes * 60 * SampleRate; left > 0; left -= len(x) {
			require.NoError(t, w.Write(x[:min(left, len(x))]))
		}
		require.NoError(t, w.Close())
		cmd := exec.Command(os.Args[0], "-test.run=^TestLongFileMemoryFlat$", "-test.v")
		cmd.Env = append(os.Environ(), memChild+"="+path)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		os.Remove(path)
		var u usage
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "MEMORY" {
				u.windows, _ = strconv.ParseInt(f[1], 10, 64)
				u.heap, _ = strconv.ParseInt(f[2], 10, 64)
				u.hwm, _ = strconv.ParseInt(f[3], 10, 64)
			}
		}
		require.Positive(t, u.windows, "%s", out)
		t.Logf("%d min: %d windows, live heap at most %.1f MB, peak RSS %.1f MB", minutes, u.windows, float64(u.heap)/1e6, float64(u.hwm)/1e6)
		return u
	}
	short, long := measure(10), measure(40)
	require.Equal(t, int64(memWindows), short.windows)
	require.Equal(t, int64(memWindows), long.windows)
	require.Less(t, long.heap-short.heap, int64(4<<20), "the live heap grew with the audio's length")
	require.Less(t, long.hwm-short.hwm, int64(40<<20), "the peak RSS grew with the audio's length")
}

// memoryChild transcribes path and prints "MEMORY windows heap hwm".
func memoryChild(t *testing.T, path string) {
	f, m := loadKit(t, "ggml-kit-tiny.en-q8_0.bin")
	opt := DefaultTranscribeOptions()
	opt.Language = "en"
	opt.Temperatures = []float32{0}
	opt.WithoutTimestamps = true
	opt.SampleLen = 4
	opt.MaxPasses = memWindows
	var windows, heap int64
	opt.OnWindow = func(WindowTrace) {
		windows++
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = max(heap, int64(ms.HeapAlloc))
	}
	_, err := f.TranscribeFile(context.Background(), m, path, opt)
	require.NoError(t, err)
	fmt.Printf("MEMORY %d %d %d\n", windows, heap, shared.ProcStatusBytes(t, "VmHWM"))
}
