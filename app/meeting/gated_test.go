package meeting

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	am "github.com/harkapp/hark/audio/meeting"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/shared"
)

// writeRecording writes interleaved {You, Others} frames as a meeting's
// two-channel 16 kHz WAV.
func writeRecording(t *testing.T, frames []float32) string {
	path := filepath.Join(t.TempDir(), AudioName)
	f, err := audio.CreateFile(path)
	require.NoError(t, err)
	w, err := audio.NewWAVWriterChannels(f, rate, am.Channels)
	require.NoError(t, err)
	require.NoError(t, w.Write(frames))
	require.NoError(t, w.Close())
	return path
}

// TestGatedFinalPass: a 24-s meeting, mostly silence: the call speaks at
// 2 s and leaks into the microphone (30 %, 100 ms late), the user speaks
// at 14 s. Each channel gated holds only its own speech (with the gate's
// pre-roll and hang), not the silence nor the echo; transcribed, its words
// are the speaker's and sit where they were said on the meeting's
// timeline.
func TestGatedFinalPass(t *testing.T) {
	call, user := clip(t, "librivox-sense-and-sensibility-0930.wav"), clip(t, "librivox-sense-and-sensibility-0880.wav")
	path := writeRecording(t, meetingFrames(24, placed{am.Others, 2, 1, call}, placed{am.You, 2.1, 0.3, call},
		placed{am.You, 14, 1, user}))
	tr := kitTranscriber(t).(*whisper.StreamModel)
	for _, tc := range []struct {
		ch     int
		x      []float32
		at     float64
		ref    string
		echoed bool
	}{{am.Others, call, 2, "librivox-sense-and-sensibility-0930", false}, {am.You, user, 14, "librivox-sense-and-sensibility-0880", true}} {
		g, err := OpenGated(path, tc.ch, LiveConfig{})
		require.NoError(t, err)
		got, err := audio.ReadAll(g)
		require.NoError(t, err)
		require.NoError(t, g.Close())
		secs := float64(len(got)) / rate
		clipSecs := float64(len(tc.x)) / rate
		t.Logf("%s: %.2f s let through of 24 (its speech %.2f s), %.2f s held back as echo", am.Names[tc.ch], secs, clipSecs, g.Skipped())
		require.Less(t, secs, clipSecs+2, "%s: only the speech, its pre-roll and the gate's hang", am.Names[tc.ch])
		require.Greater(t, secs, clipSecs*0.9, "%s: the speech", am.Names[tc.ch])
		if tc.echoed {
			require.Greater(t, g.Skipped(), 2.0, "the call's echo held back")
		}
		require.InDelta(t, tc.at, g.Timeline(0), 0.4, "the let-through audio's start (the speech's onset less the pre-roll), on the timeline")

		segs, err := tr.TranscribeWindow(context.Background(), got, "")
		require.NoError(t, err)
		words := ResultWords(&whisper.Result{Segments: segs}, tc.ch, 0, g.Timeline)
		require.NotEmpty(t, words)
		require.Less(t, shared.WER(norm(refText(t, tc.ref)), norm(speakerText(words, tc.ch))), 0.2, "%s's words", am.Names[tc.ch])
		for _, w := range words {
			require.True(t, w.Start >= tc.at-0.5 && w.End <= tc.at+clipSecs+0.5, "%s's word %+v where it was said", am.Names[tc.ch], w)
		}
	}
}

// TestGatedDecodesOnce: a gated channel decodes its recording once, both
// channels read in step from the one decode (it opened the file once a
// channel, so a final pass decoded it four times), and lets through the
// same audio as gating the channels read apart.
func TestGatedDecodesOnce(t *testing.T) {
	call := clip(t, "librivox-sense-and-sensibility-0930.wav")
	path := writeRecording(t, meetingFrames(6, placed{am.Others, 1, 1, call}, placed{am.You, 1.1, 0.3, call}))
	decodes := 0
	openAudio = func(p string) (audio.Stream, error) {
		decodes++
		return audio.Open(p)
	}
	t.Cleanup(func() { openAudio = audio.Open })
	g, err := OpenGated(path, am.Others, LiveConfig{})
	require.NoError(t, err)
	got, err := audio.ReadAll(g)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.Equal(t, 1, decodes, "decodes of the recording")

	// The same gate over the channels decoded apart.
	x, err := audio.LoadChannels16k(path)
	require.NoError(t, err)
	var gs [am.Channels]*gate
	for i := range gs {
		gs[i] = newGate(LiveConfig{}.VAD, LiveConfig{}.Echo, 0)
	}
	var want []float32
	for off := 0; off < len(x[0]); off += gateChunk {
		end := min(off+gateChunk, len(x[0]))
		for i, g := range gs {
			g.hear(x[i][off:end])
		}
		want = gs[am.Others].pass(want, gs[am.You], x[am.Others][off:end], int64(off))
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
	call := clip(t, "librivox-sense-and-sensibility-0930.wav")
	path := writeRecording(t, meetingFrames(6, placed{am.Others, 0, 1, call}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, err := openGated(ctx, path, am.Others, LiveConfig{}, 0)
	require.NoError(t, err)
	_, err = audio.ReadAll(g)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, g.Close())

	g, err = openGated(context.Background(), path, am.Others, LiveConfig{}, 4*time.Second)
	require.NoError(t, err)
	_, err = audio.ReadAll(g)
	tl := (*mel.TooLongError)(nil)
	require.ErrorAs(t, err, &tl)
	require.Equal(t, 4*time.Second, tl.Limit)
	require.NoError(t, g.Close())

	_, err = OpenGated(shared.Path(t, "audio", "jfk.wav"), am.You, LiveConfig{})
	ce := (*ChannelCountError)(nil)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 1, ce.Has)
}
