package mel

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/internal/shared"
)

func readF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Zero(t, len(b)%4)
	return ggml.BytesF32(b)
}

func kitFilters(t testing.TB, nMels int) *MelFilters {
	t.Helper()
	f, err := LoadMelFilters(shared.Path(t, "whisper-kit", "assets", "mel_filters.npz"), nMels)
	require.NoError(t, err)
	return f
}

func maxAbsDiff(a, b []float32) (float64, int) {
	worst, at := 0.0, -1
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > worst || at < 0 {
			worst, at = d, i
		}
	}
	return worst, at
}

// TestLogMelMatchesReference checks both of the kit's log-mel tensors for
// jfk.wav: transcribe()'s input (content frames, zero-padded in log-mel
// space) and the padded spectrogram's first 3000 frames.
func TestLogMelMatchesReference(t *testing.T) {
	t.Run("fft", func(t *testing.T) { checkLogMelReference(t, false) })
	// The matrix-product STFT is macOS's path (Accelerate); here it runs on
	// OpenBLAS, which CI installs.
	t.Run("sgemm", func(t *testing.T) {
		require.True(t, blas.Available(), "the sgemm STFT needs a BLAS: %s", blas.Library())
		checkLogMelReference(t, true)
	})
}

func checkLogMelReference(t *testing.T, sgemm bool) {
	defer func(old bool) { useSgemmDFT = old }(useSgemmDFT)
	useSgemmDFT = sgemm
	x, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	require.Len(t, x, 176000)
	mel, err := LogMel(x, kitFilters(t, 80), 480000)
	require.NoError(t, err)
	require.Equal(t, 80, mel.NMels)
	require.Equal(t, (176000+480000)/HopLength, mel.NFrames)

	content := len(x) / HopLength
	require.Equal(t, 1100, content)
	for _, tc := range []struct {
		file string
		got  []float32
	}{
		{"jfk.mel.f32", mel.Window(0, content, 3000)},
		{"jfk.mel-padded.f32", mel.Window(0, 3000, 3000)},
	} {
		want := readF32(t, shared.Path(t, "whisper-kit", "reference", "tensors", tc.file))
		require.Len(t, want, 80*3000)
		d, at := maxAbsDiff(tc.got, want)
		t.Logf("%s: max abs diff %.3g at mel %d frame %d", tc.file, d, at/3000, at%3000)
		require.LessOrEqual(t, d, 1e-4, tc.file)
	}
}

func TestLogMel128(t *testing.T) {
	f := kitFilters(t, 128)
	require.Equal(t, 128, f.NMels)
	x, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	mel, err := LogMel(x, f, 480000)
	require.NoError(t, err)
	require.Equal(t, 128, mel.NMels)
	require.Equal(t, 4100, mel.NFrames)
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range mel.Data {
		require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0))
		lo, hi = min(lo, v), max(hi, v)
	}
	// The clamp keeps a dynamic range of exactly 8 decades: (x+4)/4 spans 2.
	require.InDelta(t, 2.0, float64(hi-lo), 1e-5)
	// Speech frames carry more energy than the zero padding.
	var speech, pad float64
	for m := range 128 {
		for t := range 1000 {
			speech += float64(mel.Data[m*mel.NFrames+t])
			pad += float64(mel.Data[m*mel.NFrames+3000+t])
		}
	}
	require.Greater(t, speech, pad+1000)
}

// TestLogMelDeterministic: the parallel split must not change a bit.
func TestLogMelWorkersAgree(t *testing.T) {
	f := kitFilters(t, 80)
	x := make([]float32, 16000*3)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.05) * 0.3)
	}
	a, err := LogMel(x, f, 0)
	require.NoError(t, err)
	// Compute frame ranges serially in one worker and compare the raw log10
	// values before the clamp.
	serial := &Spectrogram{NMels: 80, NFrames: a.NFrames, Data: make([]float32, 80*a.NFrames)}
	top := melFrames(serial.grid(0), &signal{seg: x, head: x[:NFFT/2+1], n: len(x), total: len(x)}, f, 0, a.NFrames)
	floor := float32(top - 8)
	for i, v := range serial.Data {
		serial.Data[i] = (max(v, floor) + 4) / 4
	}
	require.Equal(t, serial.Data, a.Data)
}

func TestLogMelErrors(t *testing.T) {
	f := kitFilters(t, 80)
	_, err := LogMel(make([]float32, 100), f, 0)
	require.ErrorContains(t, err, "too short")
	_, err = LogMel(make([]float32, 1000), nil, 0)
	require.Error(t, err)
	_, err = LogMel(make([]float32, 1000), f, -1)
	require.Error(t, err)
	_, err = NewMelFilters(80, make([]float32, 10))
	require.ErrorContains(t, err, "want 80 x 201")
	_, err = LoadMelFilters(shared.Path(t, "whisper-kit", "assets", "mel_filters.npz"), 64)
	require.ErrorContains(t, err, "no mel_64.npy")
}

// BenchmarkLogMel30s: log-mel of one 30-s window (3000 frames, 80 mels).
func BenchmarkLogMel30s(b *testing.B) {
	f := kitFilters(b, 80)
	x := make([]float32, 30*16000)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.031)*0.2 + math.Sin(float64(i)*0.17)*0.1)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := LogMel(x, f, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// The spool gives exactly LogMel of the whole signal, window by window,
// for lengths around the chunk boundaries.
func TestLogMelSpoolEqualsWhole(t *testing.T) {
	f := kitFilters(t, 80)
	x, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	defer func(v bool) { nativeLittle = v }(nativeLittle)
	for _, little := range []bool{nativeLittle, false} { // false: the spool's bytes encoded one by one
		nativeLittle = little
		for _, n := range []int{1000, streamChunk - 7, streamChunk + 123, len(x)} {
			want, err := LogMel(x[:n], f, 480000)
			require.NoError(t, err)
			got, err := LogMelSpool(audio.FromSamples(x[:n], audio.WhisperRate, 1), f, 480000, 0)
			require.NoError(t, err)
			requireSameWindows(t, want, got)
			require.Equal(t, want.Peak, got.Peak)
			require.NoError(t, got.Close())
		}
	}
	_, err = LogMelSpool(audio.FromSamples(nil, audio.WhisperRate, 1), f, 480000, 0)
	require.ErrorIs(t, err, audio.ErrNoAudio)
	_, err = LogMelSpool(audio.FromSamples(x, 8000, 1), f, 480000, 0)
	require.Error(t, err)
	_, err = LogMelSpool(audio.FromSamples(x, audio.WhisperRate, 1), f, 10, 0)
	require.Error(t, err)
}

// Audio past the limit is refused with the limit in the error, before
// the rest of the stream is read.
func TestLogMelSpoolLimit(t *testing.T) {
	f := kitFilters(t, 80)
	x := make([]float32, 10*audio.WhisperRate)
	_, err := LogMelSpool(audio.FromSamples(x, audio.WhisperRate, 1), f, 480000, 2*audio.WhisperRate)
	var tl *TooLongError
	require.ErrorAs(t, err, &tl)
	require.Contains(t, err.Error(), "2s")
	s, err := LogMelSpool(audio.FromSamples(x, audio.WhisperRate, 1), f, 480000, len(x))
	require.NoError(t, err)
	s.Close()
}

// requireSameWindows compares every frame of got, read in windows of
// 3000 frames at odd offsets (across the spool's read chunks), with want.
func requireSameWindows(t *testing.T, want *Spectrogram, got *SpooledSpectrogram) {
	t.Helper()
	require.Equal(t, want.NMels, got.NMels)
	require.Equal(t, want.NFrames, got.NFrames)
	const width = 3000
	w, g := make([]float32, want.NMels*width), make([]float32, want.NMels*width)
	for start := 0; start < want.NFrames; start += width - 17 {
		n := min(width-5, want.NFrames-start)
		require.NoError(t, want.ReadWindow(w, start, n, width))
		require.NoError(t, got.ReadWindow(g, start, n, width))
		require.Equal(t, w, g, "window at %d", start)
	}
	require.Error(t, got.ReadWindow(g, want.NFrames-10, 20, width))
}

// peak is max(p, v, -v) over the samples, compared by bits: the same
// float for signed zeros, subnormals, infinities, and NaN wherever one is.
func TestPeakMatchesMax(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	sub := math.Float32frombits(3)
	for _, x := range [][]float32{
		nil, {0}, {float32(math.Copysign(0, -1))}, {-sub, sub / 3}, {0.5, -0.75, 0.25},
		{-inf, 1}, {1, nan, -2}, {-nan}, {inf, nan}, {-1e-30, 3e38, -3.4e38},
	} {
		var want float32
		for _, v := range x {
			want = max(want, v, -v)
		}
		got := peak(x)
		if math.IsNaN(float64(want)) {
			require.True(t, math.IsNaN(float64(got)), "%v", x)
			continue
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "%v", x)
	}
}
