package whisper

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scriptModel is a WindowTranscriber that follows a known script of timed
// words in sentences of perSegment words (4 by default), one segment each:
// a window hears the words whose audio lies in it. With runAhead it also
// "guesses" the rest of the script, squeezed into the window's last 0.3 s;
// with memorized it says another sentence instead of a sentence it heard
// only part of, confidently and with stable word times, as the kit model
// (which memorized whole clips) does on part of a clip; with garble it
// misspells the last word it hears, which a cut-off word tends to be.
type scriptModel struct {
	s          *Streamer // for the window's position in the stream
	words      []Word
	perSegment int
	runAhead   bool
	memorized  bool
	hears      float64 // seconds of a window the model hears (0: all; the real one hears 30 s)
	garble     bool
	stopsAfter int // segments a decode returns at most (0: all), as a pass that ends at a segment it judges cut
	prompts    []string
	windows    []float64 // length of each window decoded, seconds
	at         []float64 // audio received at each decode
}

func (m *scriptModel) TranscribeWindow(_ context.Context, samples []float32, prompt string) ([]Segment, error) {
	a := secs(m.s.bufStart)
	b := a + secs(len(samples))
	if m.hears > 0 {
		b = min(b, a+m.hears)
	}
	m.prompts = append(m.prompts, prompt)
	m.windows = append(m.windows, b-a)
	m.at = append(m.at, secs(m.s.total))
	per := m.perSegment
	if per == 0 {
		per = 4
	}
	var segs []Segment
	var rest []Word
	open := false // the last segment's sentence goes on past the window
	for i, w := range m.words {
		switch {
		case w.Start >= a-0.05 && w.End <= b:
			if i%per == 0 || len(segs) == 0 {
				segs = append(segs, Segment{})
			}
			sg := &segs[len(segs)-1]
			sg.Words = append(sg.Words, Word{Word: w.Word, Start: w.Start - a, End: w.End - a})
			open = i%per != per-1 && i+1 < len(m.words)
		case w.End > b:
			rest = append(rest, w)
		}
	}
	if m.stopsAfter > 0 && len(segs) > m.stopsAfter {
		segs, open = segs[:m.stopsAfter], false
	}
	if m.memorized && open {
		// The open sentence becomes a memorized one, its words 0.5 s
		// apart from where the heard one began (squeezed at the end).
		sg := &segs[len(segs)-1]
		t0 := sg.Words[0].Start
		sg.Words = sg.Words[:0]
		for j := range per {
			e := min(t0+0.5*float64(j)+0.4, b-a)
			sg.Words = append(sg.Words, Word{Word: fmt.Sprintf(" m%d", j), Start: max(0, e-0.4), End: e})
		}
	}
	if m.garble && len(segs) > 0 && len(rest) > 0 {
		ws := segs[len(segs)-1].Words
		ws[len(ws)-1].Word += "x"
	}
	if m.runAhead && len(rest) > 0 {
		if len(segs) == 0 {
			segs = append(segs, Segment{})
		}
		sg := &segs[len(segs)-1]
		for i, w := range rest {
			t := b - a - 0.3 + 0.3*float64(i+1)/float64(len(rest)+1)
			sg.Words = append(sg.Words, Word{Word: w.Word, Start: max(0, t-0.01), End: max(0, t)})
		}
	}
	return segs, nil
}

// script is n words of 0.4 s with 0.1 s gaps from t0 on.
func script(n int, t0 float64) []Word {
	ws := make([]Word, n)
	for i := range ws {
		s := t0 + 0.5*float64(i)
		ws[i] = Word{Word: fmt.Sprintf(" w%d", i), Start: s, End: s + 0.4}
	}
	return ws
}

func scriptText(ws []Word) string {
	var sb strings.Builder
	for _, w := range ws {
		sb.WriteString(w.Word)
	}
	return strings.TrimSpace(sb.String())
}

// tone is speech to the VAD: a loud harmonic signal.
func tone(n int, off int) []float32 {
	x := make([]float32, n)
	for i := range x {
		t := float64(i+off) / SampleRate
		x[i] = float32(0.3*math.Sin(2*math.Pi*180*t) + 0.2*math.Sin(2*math.Pi*540*t))
	}
	return x
}

// quiet is room tone well below speech.
func quiet(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(1e-3 * math.Sin(float64(i)*1.7))
	}
	return x
}

type committedAt struct {
	ev       StreamEvent
	received float64
}

// run feeds audio to a streamer over m in chunks of 100 ms and finishes.
func run(t *testing.T, m *scriptModel, cfg StreamConfig, x []float32) (*Result, []committedAt, []StreamEvent) {
	t.Helper()
	var commits []committedAt
	var all []StreamEvent
	var s *Streamer
	s = NewStreamer(m, cfg, func(e StreamEvent) {
		all = append(all, e)
		if e.Type == EventCommitted {
			commits = append(commits, committedAt{e, secs(s.total)})
		}
	})
	m.s = s
	chunk := SampleRate / 10
	for i := 0; i < len(x); i += chunk {
		require.NoError(t, s.Write(context.Background(), x[i:min(i+chunk, len(x))]))
	}
	before := s.Decodes()
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, s.Decodes()-before, 1, "Finish decodes the tail once")
	return res, commits, all
}

// noneEarly checks that no committed word was committed before its audio
// had arrived (plus the holdback), against the script's times.
func noneEarly(t *testing.T, ws []Word, commits []committedAt, holdback float64) {
	t.Helper()
	ref := map[string]Word{}
	for _, w := range ws {
		ref[strings.TrimSpace(w.Word)] = w
	}
	for _, c := range commits {
		for _, f := range strings.Fields(c.ev.Text) {
			w, ok := ref[f]
			require.True(t, ok, "committed word %q is not in the script", f)
			require.LessOrEqual(t, w.End, c.received-holdback+1e-9, "%q (ends %.2f) committed with %.2f s of audio", f, w.End, c.received)
		}
		require.LessOrEqual(t, c.ev.AudioEnd, c.received, "audio_end past the audio received")
	}
}

// Committed text follows the speech, is never rewritten, and ends as the
// whole script; the lag of a commit is bounded.
func TestStreamerCommitsWhatTwoWindowsAgreeOn(t *testing.T) {
	for _, words := range []bool{false, true} {
		t.Run(fmt.Sprintf("words=%v", words), func(t *testing.T) { testStreamerCommits(t, words) })
	}
}

func testStreamerCommits(t *testing.T, words bool) {
	ws := script(24, 0.3)
	m := &scriptModel{words: ws}
	x := tone(int(13.5*SampleRate), 0)
	res, commits, all := run(t, m, StreamConfig{Pause: -1, Words: words}, x)
	require.Equal(t, scriptText(ws), res.Text)
	noneEarly(t, ws, commits, 0.5)
	var joined strings.Builder
	for _, c := range commits {
		joined.WriteString(c.ev.Text)
	}
	require.Equal(t, res.Text, strings.TrimSpace(joined.String()), "the committed events add up to the transcript")
	// Before Finish, a word is committed at most 2 steps + holdback after its end.
	for _, c := range commits[:len(commits)-1] {
		require.LessOrEqual(t, c.received-c.ev.AudioEnd, 2.6, "lag of %q", c.ev.Text)
	}
	// Tentative text is what follows the committed text.
	sawTentative := false
	for _, e := range all {
		if e.Type == EventTentative && e.Text != "" {
			sawTentative = true
		}
	}
	require.True(t, sawTentative)
	// The decoder is prompted with the committed text.
	require.Contains(t, m.prompts[len(m.prompts)-1], strings.TrimSpace(commits[len(commits)-2].ev.Text))
}

// A model that runs ahead of the audio (the whole sentence from part of
// it, squeezed into the last frames) gets nothing committed early, and a
// garbled cut-off word is never committed.
func TestStreamerDoesNotCommitAheadOfTheAudio(t *testing.T) {
	for _, words := range []bool{false, true} {
		ws := script(20, 0.2)
		m := &scriptModel{words: ws, runAhead: true, garble: true}
		res, commits, _ := run(t, m, StreamConfig{Pause: -1, Words: words}, tone(11*SampleRate, 0))
		require.Equal(t, scriptText(ws), res.Text)
		noneEarly(t, ws, commits, 0.5)
		// 5 sentences of 2 s: each is committed as the speech goes, not
		// only at the end (word commits come more often).
		require.GreaterOrEqual(t, len(commits), 4, "words %v", words)
	}
}

// A model that says another, memorized sentence for a sentence it heard
// only part of (confident, the same words at the same times in every
// window, as the kit model does) gets none of it committed by default:
// only sentences the model has closed and gone past are, so the final
// text is the script. Committing agreed words (StreamConfig.Words) would
// commit the memorized words: this is what the default guards against.
func TestStreamerDoesNotCommitAMemorizedSentence(t *testing.T) {
	ws := script(20, 0.2)
	m := &scriptModel{words: ws, memorized: true}
	res, commits, _ := run(t, m, StreamConfig{Pause: -1}, tone(11*SampleRate, 0))
	require.Equal(t, scriptText(ws), res.Text)
	noneEarly(t, ws, commits, 0.5)
	require.GreaterOrEqual(t, len(commits), 4, "closed sentences are committed as the speech goes")

	m = &scriptModel{words: ws, memorized: true}
	res, _, _ = run(t, m, StreamConfig{Pause: -1, Words: true}, tone(11*SampleRate, 0))
	require.Contains(t, res.Text, "m0", "word commits take the memorized sentence")
}

// Cost is bounded: on 10 minutes of speech every window stays under the
// bound and the decodes per second of audio stay those of a short stream,
// also for a model whose hypotheses never agree.
func TestStreamerCostIsBounded(t *testing.T) {
	for _, never := range []bool{false, true} {
		ws := script(1190, 0.3)
		var m WindowTranscriber
		sm := &scriptModel{words: ws}
		m = sm
		if never {
			m = &disagreeing{sm}
		}
		s := NewStreamer(m, StreamConfig{Pause: -1}, nil)
		sm.s = s
		x := tone(600*SampleRate, 0)
		for i := 0; i < len(x); i += SampleRate / 10 {
			require.NoError(t, s.Write(context.Background(), x[i:min(i+SampleRate/10, len(x))]))
		}
		_, err := s.Finish(context.Background())
		require.NoError(t, err)
		maxW := 0.0
		for _, w := range sm.windows {
			maxW = max(maxW, w)
		}
		t.Logf("never agreeing %v: %d decodes for 600 s, longest window %.1f s", never, s.Decodes(), maxW)
		require.LessOrEqual(t, maxW, 21.0, "window bounded by MaxWindow + Step")
		require.LessOrEqual(t, s.Decodes(), 601, "one decode per step")
		if !never {
			require.LessOrEqual(t, maxW, 6.5, "agreeing sentences (2 s) keep the window short")
		}
	}
}

// disagreeing renames every word on every call: no two hypotheses agree.
type disagreeing struct{ m *scriptModel }

func (d *disagreeing) TranscribeWindow(ctx context.Context, x []float32, p string) ([]Segment, error) {
	segs, err := d.m.TranscribeWindow(ctx, x, p)
	for _, sg := range segs {
		for i := range sg.Words {
			sg.Words[i].Word = fmt.Sprintf("%s-%d", sg.Words[i].Word, len(d.m.windows))
		}
	}
	return segs, err
}

// A pause ends the utterance: its words are committed at once, the

// twoUtterances is two scripted utterances, 0.5-3.4 s and 8.5-11.4 s (the
// second's words v0..v5), all words, and their audio: speech tones with a
// 5-s pause between them and 1 s of quiet after.
func twoUtterances() (first, all []Word, x []float32) {
	first = script(6, 0.5)
	second := script(6, 8.5)
	for i := range second {
		second[i].Word = fmt.Sprintf(" v%d", i)
	}
	all = append(append([]Word{}, first...), second...)
	x = append(quiet(SampleRate/2), tone(3*SampleRate, 0)...)
	x = append(x, quiet(5*SampleRate)...)
	x = append(x, tone(3*SampleRate, 0)...)
	x = append(x, quiet(SampleRate)...)
	return first, all, x
}

// silence after it is not decoded, and the next utterance starts after it.
func TestStreamerPauseEndsUtterance(t *testing.T) {
	_, ws, x := twoUtterances()
	m := &scriptModel{words: ws}
	res, commits, _ := run(t, m, StreamConfig{}, x)
	require.Equal(t, scriptText(ws), res.Text)
	noneEarly(t, ws, commits, 0)
	var firstDone float64
	for _, c := range commits {
		if strings.Contains(c.ev.Text, "w5") && c.ev.AudioEnd < 5 {
			firstDone = c.received
		}
	}
	require.NotZero(t, firstDone, "the first utterance's last word is committed")
	require.LessOrEqual(t, firstDone, 3.5+1.5, "committed by the end of the pause")
	quietDecodes := 0
	for _, a := range m.at {
		if a > 5 && a < 8.4 {
			quietDecodes++
		}
	}
	require.Zero(t, quietDecodes, "silence between utterances is not decoded")
	require.Less(t, m.at[len(m.at)-1], secs(len(x)), "the silent tail after the last utterance is not decoded")
}

// committing makes a streamer over m (default settings) that keeps what
// it commits.
func committing(m *scriptModel) (*Streamer, *[]StreamEvent) {
	var commits []StreamEvent
	s := NewStreamer(m, StreamConfig{}, func(e StreamEvent) {
		if e.Type == EventCommitted {
			commits = append(commits, e)
		}
	})
	m.s = s
	return s, &commits
}

// EndUtterance commits the utterance a caller cut off before its pause
// (a meeting's echo gate closing on it), once: called again, or after a
// pause, it decodes nothing.
func TestStreamerEndUtterance(t *testing.T) {
	ws := script(6, 0.5)
	m := &scriptModel{words: ws}
	s, commits := committing(m)
	x := append(quiet(SampleRate/2), tone(3*SampleRate, 0)...)
	for i := 0; i < len(x); i += SampleRate / 10 {
		require.NoError(t, s.Write(context.Background(), x[i:min(i+SampleRate/10, len(x))]))
	}
	require.NotEqual(t, scriptText(ws), s.Result().Text, "not all committed before the pause")
	before := s.Decodes()
	require.NoError(t, s.EndUtterance(context.Background()))
	require.Equal(t, scriptText(ws), s.Result().Text, "the cut-off utterance committed")
	require.Equal(t, before+1, s.Decodes())
	require.NoError(t, s.EndUtterance(context.Background()))
	require.Equal(t, before+1, s.Decodes(), "nothing heard since: no decode")
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, scriptText(ws), res.Text)
	require.NotEmpty(t, *commits)
}

// A caller that fell behind passes everything pending in one Write: a
// pause inside it still ends the first utterance there, with a window of
// its own (before, the pause went unseen and both utterances were decoded
// as one window).
func TestStreamerPauseInsideOneWrite(t *testing.T) {
	first, ws, x := twoUtterances()
	m := &scriptModel{words: ws}
	s, commits := committing(m)
	require.NoError(t, s.Write(context.Background(), x))
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, scriptText(ws), res.Text)
	require.NotEmpty(t, m.windows)
	require.Less(t, m.windows[0], 5.0, "the first utterance is decoded on its own")
	require.NotEmpty(t, *commits)
	require.Equal(t, scriptText(first), strings.TrimSpace((*commits)[0].Text), "the first commit is the first utterance")
}

// A Write whose decode is cancelled (the app cancels the step in flight
// at release) loses no audio: Finish still transcribes all of it.
func TestStreamerCancelledWriteKeepsAudio(t *testing.T) {
	_, ws, x := twoUtterances()
	m := &scriptModel{words: ws}
	s := NewStreamer(cancellable{m}, StreamConfig{}, nil)
	m.s = s
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Write(ctx, x), context.Canceled)
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, scriptText(ws), res.Text)
}

// cancellable fails once its context is done.
type cancellable struct{ m *scriptModel }

func (c cancellable) TranscribeWindow(ctx context.Context, x []float32, p string) ([]Segment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.m.TranscribeWindow(ctx, x, p)
}

// A decoder that fell behind leaves more audio at release than one decode
// hears (the real model hears 30 s): Finish commits it a window at a time
// and loses none.
func TestStreamerFinishAfterBacklog(t *testing.T) {
	ws := script(80, 0.2) // 0.2 .. 40 s, no pause
	m := &scriptModel{words: ws, hears: WindowSecs}
	s := NewStreamer(cancellable{m}, StreamConfig{}, nil)
	m.s = s
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := tone(41*SampleRate, 0)
	require.NoError(t, s.Write(context.Background(), x[:SampleRate/2]))
	require.ErrorIs(t, s.Write(ctx, x[SampleRate/2:]), context.Canceled, "the step in flight at release is cancelled")
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.Equal(t, scriptText(ws), res.Text)
	for _, w := range m.windows {
		require.LessOrEqual(t, w, 41.0)
	}
}

// spokenTwice is two sentences of four words with a 0.6 s gap between
// them (past the detector's hangover, short of a pause), then 0.6 s of
// quiet.
func spokenTwice() ([]Word, []float32) {
	ws := append(script(4, 0.3), script(4, 2.9)...)
	for i := 4; i < 8; i++ {
		ws[i].Word = fmt.Sprintf(" v%d", i-4)
	}
	x := append(quiet(SampleRate*3/10), tone(SampleRate*2, 0)...)
	x = append(x, quiet(SampleRate*6/10)...)
	x = append(x, tone(SampleRate*2, 0)...)
	return ws, append(x, quiet(SampleRate*6/10)...)
}

// A decode that ends its text at the first sentence of the window (the
// speechkit model closes a segment and stops, where the next pass would
// go on) loses nothing at the end: Finish decodes the rest of the window
// while speech began after the last word, and not when it did not.
func TestStreamerFinalDecodesTheRest(t *testing.T) {
	ws, x := spokenTwice()
	for _, tc := range []struct {
		name       string
		stopsAfter int
		finals     int // decodes at the end
	}{
		{"stops after a sentence", 1, 2},
		{"whole decodes", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &scriptModel{words: ws, stopsAfter: tc.stopsAfter}
			s := NewStreamer(m, StreamConfig{Pause: -1}, nil)
			m.s = s
			for i := 0; i < len(x); i += SampleRate / 10 {
				require.NoError(t, s.Write(context.Background(), x[i:min(i+SampleRate/10, len(x))]))
			}
			before := len(m.windows)
			res, err := s.Finish(context.Background())
			require.NoError(t, err)
			require.Equal(t, scriptText(ws), res.Text)
			require.Len(t, m.windows, before+tc.finals)
		})
	}
}

// Finish decodes only the uncommitted tail.
func TestStreamerFinishDecodesOnlyTheTail(t *testing.T) {
	ws := script(30, 0.2)
	m := &scriptModel{words: ws}
	s := NewStreamer(m, StreamConfig{Pause: -1}, nil)
	m.s = s
	x := tone(16*SampleRate, 0)
	for i := 0; i < len(x); i += SampleRate / 10 {
		require.NoError(t, s.Write(context.Background(), x[i:i+SampleRate/10]))
	}
	n := len(m.windows)
	start := time.Now()
	res, err := s.Finish(context.Background())
	require.NoError(t, err)
	require.Less(t, time.Since(start), time.Second)
	require.Len(t, m.windows, n+1)
	require.LessOrEqual(t, m.windows[n], 3.0, "the tail after the committed words")
	require.Equal(t, scriptText(ws), res.Text)
}

// With Agree 3 a word needs three consecutive hypotheses: the transcript
// is the same, nothing is committed early, and the first commit comes a
// step later than with two.
func TestStreamerAgreeThree(t *testing.T) {
	ws := script(24, 0.3)
	first := map[int]float64{}
	for _, agree := range []int{2, 3} {
		m := &scriptModel{words: ws, runAhead: true, garble: true}
		res, commits, _ := run(t, m, StreamConfig{Pause: -1, Agree: agree}, tone(int(13.5*SampleRate), 0))
		require.Equal(t, scriptText(ws), res.Text)
		noneEarly(t, ws, commits, 0.5)
		first[agree] = commits[0].received
	}
	require.GreaterOrEqual(t, first[3], first[2]+1-1e-9)
}

// NoPrompt decodes every window unprompted; the text is the same.
func TestStreamerNoPrompt(t *testing.T) {
	ws := script(12, 0.3)
	m := &scriptModel{words: ws}
	res, commits, _ := run(t, m, StreamConfig{Pause: -1, NoPrompt: true}, tone(7*SampleRate, 0))
	require.Equal(t, scriptText(ws), res.Text)
	require.Greater(t, len(commits), 1)
	for _, p := range m.prompts {
		require.Empty(t, p)
	}
}

// Run fed far faster than real time (10 minutes of audio as fast as the
// channel takes it, to a model whose hypotheses never agree) holds a
// bounded window: it stops taking audio while the window is over
// 2×MaxWindow, so the sender waits instead of the buffer growing.
func TestStreamerRunBoundsItsBuffer(t *testing.T) {
	sm := &scriptModel{words: script(1190, 0.3)}
	s := NewStreamer(&disagreeing{sm}, StreamConfig{Pause: -1}, nil)
	sm.s = s
	in := make(chan []float32, 16)
	var sent atomic.Bool
	go func() {
		defer close(in)
		defer sent.Store(true)
		for off := 0; off < 600*SampleRate; off += 10 * SampleRate {
			in <- tone(10*SampleRate, off)
		}
	}()
	held := 0
	probe := &probing{WindowTranscriber: &disagreeing{sm}, seen: func() {
		held = max(held, s.Buffered())
		// A slow decoder: the sender fills the channel meanwhile.
		for len(in) < cap(in) && !sent.Load() {
			runtime.Gosched()
		}
	}}
	s.t = probe
	res, err := s.Run(context.Background(), in)
	require.NoError(t, err)
	require.InDelta(t, 600, res.Duration, 0.01)
	t.Logf("%d decodes, at most %.1f s held", s.Decodes(), secs(held))
	require.LessOrEqual(t, held, samplesOf(3*s.cfg.MaxWindow)+10*SampleRate, "2×MaxWindow, a catch-up Write of MaxWindow and one chunk")
}

// probing calls seen before every window it passes on.
type probing struct {
	WindowTranscriber
	seen func()
}

func (p *probing) TranscribeWindow(ctx context.Context, x []float32, prompt string) ([]Segment, error) {
	p.seen()
	return p.WindowTranscriber.TranscribeWindow(ctx, x, prompt)
}
