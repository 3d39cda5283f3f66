package channels

import (
	"context"
	"strings"
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
// same audio as gating the channels read apart.
func TestGatedDecodesOnce(t *testing.T) {
	const call = "librivox-sense-and-sensibility-0930"
	path := testaudio.Stereo(t, 6, testaudio.Clip{Ch: speakers.Others, At: 1, Name: call},
		testaudio.Clip{Ch: speakers.You, At: 1.1, Name: call, Gain: 0.3})
	decodes := 0
	openAudio = func(p string) (audio.Stream, error) {
		decodes++
		return audio.Open(p)
	}
	t.Cleanup(func() { openAudio = audio.Open })
	g, err := OpenGated(path, speakers.Others, GateConfig{})
	require.NoError(t, err)
	got, err := audio.ReadAll(g)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.Equal(t, 1, decodes, "decodes of the recording")

	// The same gate over the channels decoded apart.
	x, err := audio.LoadChannels16k(path)
	require.NoError(t, err)
	var gs [speakers.Count]*Gate
	for i := range gs {
		gs[i] = NewGate(GateConfig{})
	}
	var want []float32
	for off := 0; off < len(x[0]); off += Chunk {
		end := min(off+Chunk, len(x[0]))
		for i, g := range gs {
			g.Hear(x[i][off:end])
		}
		want = gs[speakers.Others].Pass(want, gs[speakers.You], x[speakers.Others][off:end], int64(off))
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got)
	require.InDelta(t, 6, g.Duration(), 0.01, "the recording's length")
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
