package channels

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/internal/speakers"
	"github.com/harkapp/hark/internal/testaudio"
)

// TestGatedFinalPass: a 24-s meeting, mostly silence: the call speaks at
// 2 s and leaks into the microphone (30 %, 100 ms late), the user speaks
// at 14 s. Each channel gated holds only its own speech (with the gate's
// pre-roll and hang), not the silence nor the echo; transcribed, its words
// are the speaker's and sit where they were said on the meeting's
// timeline.
func TestGatedFinalPass(t *testing.T) {
	const call, user = "librivox-sense-and-sensibility-0930", "librivox-sense-and-sensibility-0880"
	path := testaudio.Stereo(t, 24, testaudio.Clip{Ch: speakers.Others, At: 2, Name: call},
		testaudio.Clip{Ch: speakers.You, At: 2.1, Name: call, Gain: 0.3}, testaudio.Clip{Ch: speakers.You, At: 14, Name: user})
	tr := whisper.NewStreamModel(testaudio.Kit(t))
	for _, tc := range []struct {
		ch     int
		at     float64
		ref    string
		echoed bool
	}{{speakers.Others, 2, call, false}, {speakers.You, 14, user, true}} {
		g, err := OpenGated(path, tc.ch, GateConfig{})
		require.NoError(t, err)
		got, err := audio.ReadAll(g)
		require.NoError(t, err)
		require.NoError(t, g.Close())
		secs := float64(len(got)) / rate16k
		clipSecs := float64(len(testaudio.Load(t, tc.ref))) / rate16k
		t.Logf("%s: %.2f s let through of 24 (its speech %.2f s), %.2f s held back as echo", speakers.Names[tc.ch], secs, clipSecs, g.Skipped())
		require.Less(t, secs, clipSecs+2, "%s: only the speech, its pre-roll and the gate's hang", speakers.Names[tc.ch])
		require.Greater(t, secs, clipSecs*0.9, "%s: the speech", speakers.Names[tc.ch])
		if tc.echoed {
			require.Greater(t, g.Skipped(), 2.0, "the call's echo held back")
		}
		require.InDelta(t, tc.at, g.Timeline(0), 0.4, "the let-through audio's start (the speech's onset less the pre-roll), on the timeline")

		segs, err := tr.TranscribeWindow(context.Background(), got, "")
		require.NoError(t, err)
		words := ResultWords(&whisper.Result{Segments: segs}, tc.ch, 0, g.Timeline)
		require.NotEmpty(t, words)
		var text []string
		for _, w := range words {
			require.Equal(t, tc.ch, w.Speaker)
			require.True(t, w.Start >= tc.at-0.5 && w.End <= tc.at+clipSecs+0.5, "%s's word %+v where it was said", speakers.Names[tc.ch], w)
			text = append(text, w.Text)
		}
		require.Less(t, testaudio.WER(t, tc.ref, strings.Join(text, " ")), 0.2, "%s's words", speakers.Names[tc.ch])
	}
}

// TestGatedDecodesOnce: a gated channel decodes its recording once, both
// channels read in step from the one decode (it opened the file once a
// channel, so a final pass decoded it four times), and lets through the
// same audio as gating the channels read apart; both channels read at
// once (a goroutine each) come from one decode too, and so does a whole
// TranscribeRecording (it decoded the recording once a channel).
func TestGatedDecodesOnce(t *testing.T) {
	const call = "librivox-sense-and-sensibility-0930"
	path := testaudio.Stereo(t, 6, testaudio.Clip{Ch: speakers.Others, At: 1, Name: call},
		testaudio.Clip{Ch: speakers.You, At: 1.1, Name: call, Gain: 0.3}, testaudio.Clip{Ch: speakers.You, At: 4.5, Name: "jfk"})
	decodes := 0
	openAudio = func(p string) (audio.Stream, error) {
		decodes++
		return audio.Open(p)
	}
	t.Cleanup(func() { openAudio = audio.Open })

	// The gate over the channels decoded apart.
	x, err := audio.LoadChannels16k(path)
	require.NoError(t, err)
	var gs [speakers.Count]*Gate
	for i := range gs {
		gs[i] = NewGate(GateConfig{})
	}
	var want [speakers.Count][]float32
	for off := 0; off < len(x[0]); off += Chunk {
		end := min(off+Chunk, len(x[0]))
		for i, g := range gs {
			g.Hear(x[i][off:end])
		}
		for i, g := range gs {
			want[i] = g.Pass(want[i], gs[1-i], x[i][off:end], int64(off))
		}
	}
	for ch := range want {
		require.NotEmpty(t, want[ch], "%s's speech", speakers.Names[ch])
	}

	g, err := OpenGated(path, speakers.Others, GateConfig{})
	require.NoError(t, err)
	got, err := audio.ReadAll(g)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.Equal(t, 1, decodes, "decodes of the recording, one channel read")
	require.Equal(t, want[speakers.Others], got)
	dur := float64(len(x[0])) / rate16k
	require.InDelta(t, dur, g.Duration(), 0.01, "the recording's length")

	decodes = 0
	pair, err := openGatedPair(context.Background(), path, GateConfig{}, 0)
	require.NoError(t, err)
	var both [speakers.Count][]float32
	var errs [speakers.Count]error
	var wg sync.WaitGroup
	for ch, g := range pair {
		wg.Go(func() {
			both[ch], errs[ch] = audio.ReadAll(g)
			errs[ch] = errors.Join(errs[ch], g.Close())
		})
	}
	wg.Wait()
	require.Equal(t, 1, decodes, "decodes of the recording, both channels read")
	for ch := range both {
		require.NoError(t, errs[ch])
		require.Equal(t, want[ch], both[ch], "%s's channel", speakers.Names[ch])
		require.InDelta(t, dur, pair[ch].Duration(), 0.01, "the recording's length")
	}

	decodes = 0
	f, m := testaudio.Kit(t)
	opt := whisper.DefaultTranscribeOptions()
	opt.WordTimestamps = true
	ts, err := TranscribeRecording(context.Background(), f, m, path, RecordingOptions{Transcribe: opt})
	require.NoError(t, err)
	require.Equal(t, 1, decodes, "decodes of the recording, a whole pass")
	require.Len(t, ts, 2, "both sides spoke")
}

// TestGatedPairBounded: both channels read at once, one reader fast and
// one slow: the slow one's channel holds at most maxAhead (and a chunk
// with its pre-roll) of audio let through, and both get all of it.
func TestGatedPairBounded(t *testing.T) {
	maxAhead = rate16k / 2
	t.Cleanup(func() { maxAhead = 10 * rate16k })
	path := testaudio.Stereo(t, 0, testaudio.Clip{Ch: speakers.You, Name: "jfk"}, testaudio.Clip{Ch: speakers.Others, Name: "jfk"})
	pair, err := openGatedPair(context.Background(), path, GateConfig{}, 0)
	require.NoError(t, err)
	var fast []float32
	var fastErr error
	var wg sync.WaitGroup
	wg.Go(func() { fast, fastErr = audio.ReadAll(pair[speakers.Others]) })
	slow, held := 0, 0
	p := make([]float32, 100)
	for {
		n, err := pair[speakers.You].Read(p)
		slow += n
		pair[0].r.mu.Lock()
		held = max(held, len(pair[speakers.You].out))
		pair[0].r.mu.Unlock()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	wg.Wait()
	require.NoError(t, fastErr)
	t.Logf("let through: %d and %d samples; the slow channel held at most %d", slow, len(fast), held)
	require.LessOrEqual(t, held, maxAhead+preRoll+Chunk)
	require.Greater(t, slow, 4*maxAhead, "the speech let through")
	require.Equal(t, slow, len(fast), "the same speech on both channels")
	for _, g := range pair {
		require.NoError(t, g.Close())
	}
}

// TestGatedBounds: a gated channel's reading ends with its context, and
// past its limit of the recording (not of the speech let through: a
// 6-s recording with 3 s of speech is over a 4-s limit) with a
// *mel.TooLongError; a recording without two channels is refused.
func TestGatedBounds(t *testing.T) {
	path := testaudio.Stereo(t, 6, testaudio.Clip{Ch: speakers.Others, Name: "librivox-sense-and-sensibility-0930"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, err := openGated(ctx, path, speakers.Others, GateConfig{}, 0)
	require.NoError(t, err)
	_, err = audio.ReadAll(g)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, g.Close())

	g, err = openGated(context.Background(), path, speakers.Others, GateConfig{}, 4*time.Second)
	require.NoError(t, err)
	_, err = audio.ReadAll(g)
	tl := (*mel.TooLongError)(nil)
	require.ErrorAs(t, err, &tl)
	require.Equal(t, 4*time.Second, tl.Limit)
	require.NoError(t, g.Close())

	_, err = OpenGated(shared.Path(t, "audio", "jfk.wav"), speakers.You, GateConfig{})
	ce := (*ChannelCountError)(nil)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 1, ce.Has)
}
