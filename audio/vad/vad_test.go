package vad

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

var clips = []string{"jfk", "ljspeech-LJ001-0002", "librispeech-1089-134691-0000", "librivox-sense-and-sensibility-0880"}

func load(t *testing.T, name string) []float32 {
	x, err := audio.Load16k(shared.Path(t, "audio", name+".wav"))
	require.NoError(t, err)
	return x
}

// speechSpan is the test's oracle on a clean clip: the first and last
// 10 ms windows starting 30 ms louder than 10% of the clip's loudest
// window (the clips
// are studio or audiobook recordings with quiet edges).
func speechSpan(x []float32) (int, int) {
	const w = 160
	var levels []float64
	peak := 0.0
	for i := 0; i+w <= len(x); i += w {
		var s float64
		for _, v := range x[i : i+w] {
			s += float64(v) * float64(v)
		}
		r := math.Sqrt(s / w)
		levels = append(levels, r)
		peak = max(peak, r)
	}
	// Sustained: three windows in a row (a 10 ms click is not speech).
	loud := func(i int) bool {
		for j := i; j < i+3; j++ {
			if j >= len(levels) || levels[j] <= 0.1*peak {
				return false
			}
		}
		return true
	}
	first, last := -1, -1
	for i := range levels {
		if loud(i) {
			if first < 0 {
				first = i
			}
			last = i + 2
		}
	}
	return first * w, (last + 1) * w
}

func pad(x []float32, before, after int, noiseDB float64, seed uint64) []float32 {
	out := make([]float32, before+len(x)+after)
	copy(out[before:], x)
	if noiseDB > -200 {
		r := rand.New(rand.NewPCG(seed, 1))
		amp := math.Pow(10, noiseDB/20)
		for i := range out {
			out[i] += float32(r.NormFloat64() * amp)
		}
	}
	return out
}

const sr = 16000

func TestTrimPaddedClips(t *testing.T) {
	cfg := Config{}.withDefaults()
	lead, trail := cfg.LeadMarginMs*sr/1000, cfg.TrailMarginMs*sr/1000
	tol := sr / 10 // 100 ms
	for _, name := range clips {
		clip := load(t, name)
		on, off := speechSpan(clip)
		for _, noise := range []float64{-300, -60, -45} {
			before, after := sr+sr/3, 2*sr
			x := pad(clip, before, after, noise, 7)
			start, end, err := Trim(x, Config{})
			require.NoError(t, err, name)
			wantStart, wantEnd := before+on-lead, before+off+trail
			t.Logf("%s noise %v dB: start %d (want %d, %+.0f ms) end %d (want %d, %+.0f ms)", name, noise,
				start, wantStart, float64(start-wantStart)/16, end, wantEnd, float64(end-wantEnd)/16)
			require.InDelta(t, wantStart, start, float64(tol), "%s noise %v: start", name, noise)
			require.InDelta(t, wantEnd, end, float64(tol), "%s noise %v: end", name, noise)
			// Never cut speech, whatever the margins.
			require.LessOrEqual(t, start, before+on)
			require.GreaterOrEqual(t, end, before+off)
		}
	}
}

func TestTrimSilenceAndClicks(t *testing.T) {
	_, _, err := Trim(make([]float32, sr), Config{})
	require.ErrorIs(t, err, ErrNoSpeech)
	_, _, err = Trim(nil, Config{})
	require.ErrorIs(t, err, ErrNoSpeech)
	// Room tone with a 10 ms click: not speech.
	x := pad(make([]float32, 2*sr), 0, 0, -50, 3)
	for i := sr; i < sr+160; i++ {
		x[i] = 0.8
	}
	_, _, err = Trim(x, Config{})
	require.ErrorIs(t, err, ErrNoSpeech)
	// Loud steady white noise is not speech either.
	_, _, err = Trim(pad(make([]float32, 2*sr), 0, 0, -300, 0), Config{})
	require.ErrorIs(t, err, ErrNoSpeech)
}

// TestDetectorEndOfSpeech streams a clip after room tone and then
// silence, as a toggle-mode dictation, and checks the end is called once
// the pause has passed the speech's end, not during the clip.
func TestDetectorEndOfSpeech(t *testing.T) {
	const pause = 800 * time.Millisecond
	for _, name := range clips {
		clip := load(t, name)
		_, off := speechSpan(clip)
		before := sr / 2
		x := pad(clip, before, 3*sr, -60, 11)
		d := NewDetector(Config{})
		endAt := -1
		for i := 0; i < len(x); i += 160 { // 10 ms callbacks
			d.Write(x[i:min(i+160, len(x))])
			if endAt < 0 && d.EndOfSpeech(pause) {
				endAt = i + 160
			}
		}
		require.True(t, d.SpeechSeen(), name)
		want := before + off + int(pause.Seconds()*sr)
		t.Logf("%s: end of speech at %d, want ~%d (%+.0f ms)", name, endAt, want, float64(endAt-want)/16)
		require.Greater(t, endAt, before+off, "%s: ended before the speech did", name)
		require.InDelta(t, want, endAt, float64(sr/5), "%s: end of speech", name)
		require.False(t, d.Speaking())
	}
}
