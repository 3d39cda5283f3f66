package whisper

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/harkapp/hark/audio/vad"
)

// WindowTranscriber transcribes one window of a stream: 16 kHz mono
// samples into segments of timed words (times in seconds from the
// window's start), conditioned on prompt, the committed text before the
// window. StreamModel is the one over a loaded model; tests use scripted
// ones.
type WindowTranscriber interface {
	TranscribeWindow(ctx context.Context, samples []float32, prompt string) ([]Segment, error)
}

// StreamConfig tunes a Streamer; zero fields take the defaults.
type StreamConfig struct {
	// Step is how much new audio triggers the next decode (1 s). Each
	// decode costs one window of at most MaxWindow, so the cost per second
	// of audio is bounded by about MaxWindow/Step window decodes' worth.
	Step time.Duration
	// MaxWindow bounds the window (20 s, under Whisper's 30 s): when
	// nothing is committed for this long, the words heard in its first
	// half are committed as they stand and that audio dropped.
	MaxWindow time.Duration
	// Holdback: words ending closer than this to the newest audio are
	// never committed (0.5 s): a word at the audio's end may be cut off,
	// or a model's guess at what comes next squeezed into the last frames.
	Holdback time.Duration
	// TimeTolerance is how far a word's end may move between the two
	// hypotheses that agree on it (0.3 s). Words heard in the audio keep
	// their place; words the model runs ahead with are stretched over
	// whatever audio there is, so they move as it grows.
	TimeTolerance time.Duration
	// Pause is the silence (voice-activity detector) that ends an
	// utterance (800 ms): its words are all committed and the next
	// window starts after it. Negative disables utterance cuts.
	Pause time.Duration
	// Agree is how many consecutive hypotheses must agree on a word
	// before it is committed (2: local agreement).
	Agree int
	// Words commits agreed words wherever they stand. By default only
	// whole segments are committed, and only once the model has closed
	// them and begun another after them in each agreeing hypothesis: a
	// model that says a whole memorized sentence on part of its audio
	// (the kit model, trained on whole clips) says it confidently, with
	// stable word times, as the hypothesis's only, still open segment.
	// Word commits lag less with a model that recognizes partial audio.
	Words bool
	// NoPrompt decodes every window without the committed text as its
	// prompt (which a model never trained with prompts, like the kit
	// model, can be thrown by).
	NoPrompt bool
}

func (c StreamConfig) withDefaults() StreamConfig {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Step, time.Second)
	def(&c.MaxWindow, 20*time.Second)
	def(&c.Holdback, 500*time.Millisecond)
	def(&c.TimeTolerance, 300*time.Millisecond)
	def(&c.Pause, 800*time.Millisecond)
	if c.Agree < 2 {
		c.Agree = 2
	}
	c.MaxWindow = min(c.MaxWindow, (WindowSecs-1)*time.Second)
	return c
}

// Stream event types.
const (
	EventCommitted = "committed"
	EventTentative = "tentative"
)

// StreamEvent is what a Streamer reports: newly committed text (never
// changed afterwards), or the whole uncommitted tail as it now stands.
// AudioEnd is the end of the audio the text covers, in seconds from the
// start of the stream.
type StreamEvent struct {
	Type       string  `json:"type"`
	Text       string  `json:"text"`
	AudioStart float64 `json:"audio_start"`
	AudioEnd   float64 `json:"audio_end"`
}

// hypWord is a hypothesis's word in stream time; closes marks the last
// word of a segment that another segment follows in the same hypothesis.
type hypWord struct {
	Word
	closes bool
}

// Streamer turns a growing stream of audio into text at bounded cost
// (local agreement): it decodes a window ending at the newest audio,
// commits the leading segments (or words: StreamConfig.Words) that
// consecutive hypotheses agree on (words and place) once their audio is
// in, keeps the rest as tentative, and moves the window past committed
// audio. A voice-activity pause ends
// an utterance; Finish decodes only what is not committed yet. Not safe
// for concurrent use.
type Streamer struct {
	t    WindowTranscriber
	cfg  StreamConfig
	emit func(StreamEvent)

	buf      []float32 // audio from bufStart on
	pend     []float32 // audio a failed Write did not get to
	bufStart int       // sample index of buf[0] in the stream
	total    int       // samples received
	decoded  int       // total at the last decode
	det      *vad.Detector
	speaking bool    // det's state after the last 100 ms fed
	onset    float64 // stream time at which det last heard speech begin
	cut      bool    // an utterance was cut: wait for speech before decoding

	committed []Word // absolute times
	segs      []Segment
	prev      [][]hypWord // the last Agree-1 hypotheses after the committed words
	tentative string
	decodes   int
}

// NewStreamer makes a streamer over t; emit (may be nil) gets its events.
func NewStreamer(t WindowTranscriber, cfg StreamConfig, emit func(StreamEvent)) *Streamer {
	if emit == nil {
		emit = func(StreamEvent) {}
	}
	return &Streamer{t: t, cfg: cfg.withDefaults(), emit: emit, det: vad.NewDetector(vad.Config{})}
}

func secs(samples int) float64 { return float64(samples) / SampleRate }
func samplesOf(d time.Duration) int {
	return int(d.Seconds() * SampleRate)
}

// Write adds audio and, when enough has arrived since the last decode,
// decodes once (however much arrived: a caller that fell behind passes
// everything pending in one Write and catches up in one step).
func (s *Streamer) Write(ctx context.Context, samples []float32) error {
	if err := s.feed(ctx, samples); err != nil {
		return err
	}
	if s.cut && !s.det.SpeechSeen() {
		return nil
	}
	if s.total-s.decoded < samplesOf(s.cfg.Step) {
		return nil
	}
	return s.step(ctx)
}

// feed adds audio (after any that a failed call left pending) to the
// window. The voice-activity detector follows it 100 ms at a time, so a
// pause inside a long Write ends its utterance where it is, not at the end
// of the Write (which would merge the utterances around it into one
// window, past what one decode can hold). When an utterance's decode fails
// (a step cancelled at release), the rest stays pending for the next call.
func (s *Streamer) feed(ctx context.Context, samples []float32) error {
	if len(s.pend) > 0 {
		samples = append(s.pend, samples...)
		s.pend = nil
	}
	for len(samples) > 0 {
		n := min(len(samples), SampleRate/10)
		x := samples[:n]
		samples = samples[n:]
		s.buf = append(s.buf, x...)
		s.total += n
		s.det.Write(x)
		if sp := s.det.Speaking(); sp != s.speaking {
			s.speaking = sp
			if sp {
				s.onset = secs(s.total)
			}
		}
		if s.cfg.Pause > 0 && s.det.EndOfSpeech(s.cfg.Pause) {
			if err := s.endUtterance(ctx); err != nil {
				s.pend = append([]float32(nil), samples...)
				return err
			}
			continue
		}
		if s.cut && !s.det.SpeechSeen() {
			// Between utterances: keep a little lead-in, decode nothing.
			if keep := samplesOf(time.Second); len(s.buf) > keep {
				s.drop(len(s.buf) - keep)
			}
		}
	}
	return nil
}

// Finish decodes the uncommitted tail and commits all of it, returning the
// whole transcript. A decoder that fell behind may leave more than one
// window: it is committed a window at a time, as a step does, before the
// last decode.
func (s *Streamer) Finish(ctx context.Context) (*Result, error) {
	if err := s.feed(ctx, nil); err != nil {
		return nil, err
	}
	// After an utterance ended, a tail without speech is not decoded.
	if len(s.buf) >= samplesOf(100*time.Millisecond) && (!s.cut || s.det.SpeechSeen()) {
		if err := s.workDown(ctx, samplesOf(s.cfg.MaxWindow)); err != nil {
			return nil, err
		}
		if err := s.commitAll(ctx); err != nil {
			return nil, err
		}
	}
	s.setTentative(nil)
	s.buf = s.buf[:0]
	return s.Result(), nil
}

// Result is the committed transcript so far: one segment per commit.
func (s *Streamer) Result() *Result {
	var sb strings.Builder
	for _, w := range s.committed {
		sb.WriteString(w.Word)
	}
	segs := append([]Segment{}, s.segs...)
	return &Result{Text: strings.TrimSpace(sb.String()), Segments: segs, Language: "en", Duration: secs(s.total)}
}

// Tentative is the uncommitted tail as last decoded.
func (s *Streamer) Tentative() string { return s.tentative }

// Decodes counts the window decodes so far (for cost checks).
func (s *Streamer) Decodes() int { return s.decodes }

// Window is the length of audio the next decode would cover.
func (s *Streamer) Window() time.Duration {
	return time.Duration(secs(len(s.buf)) * float64(time.Second))
}

// promptText is the committed text the decoder is conditioned on (the
// window transcriber bounds its share of the prompt).
func (s *Streamer) promptText() string {
	if s.cfg.NoPrompt {
		return ""
	}
	var sb strings.Builder
	for _, w := range s.committed[max(0, len(s.committed)-100):] {
		sb.WriteString(w.Word)
	}
	return sb.String()
}

// hypothesis decodes the window and returns its words after the
// committed ones, in stream time.
func (s *Streamer) hypothesis(ctx context.Context) ([]hypWord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // abandoned (released): not even the spectrogram
	}
	s.decoded = s.total
	s.decodes++
	segs, err := s.t.TranscribeWindow(ctx, s.buf, s.promptText())
	if err != nil {
		return nil, err
	}
	off := secs(s.bufStart)
	last := 0.0
	if n := len(s.committed); n > 0 {
		last = s.committed[n-1].End
	}
	var out []hypWord
	for _, seg := range segs {
		for _, w := range seg.Words {
			w.Start += off
			w.End += off
			if strings.TrimSpace(w.Word) == "" {
				continue
			}
			if w.End <= last+0.05 {
				continue // heard before the window's start: already committed
			}
			out = append(out, hypWord{Word: w})
		}
		if n := len(out); n > 0 {
			out[n-1].closes = true
		}
	}
	if n := len(out); n > 0 {
		out[n-1].closes = false // the last segment may still grow
	}
	return s.dropRepeat(out), nil
}

// dropRepeat removes a hypothesis's opening words that repeat the end of
// the committed text (a word straddling the window's start is heard
// twice).
func (s *Streamer) dropRepeat(hyp []hypWord) []hypWord {
	for n := min(5, len(hyp), len(s.committed)); n >= 1; n-- {
		tail := s.committed[len(s.committed)-n:]
		same := true
		for i := range n {
			if normWord(tail[i].Word) != normWord(hyp[i].Word.Word) || hyp[i].Start > tail[n-1].End+1 {
				same = false
				break
			}
		}
		if same {
			return hyp[n:]
		}
	}
	return hyp
}

// step decodes the window once and commits what two hypotheses agree on.
func (s *Streamer) step(ctx context.Context) error {
	hyp, err := s.hypothesis(ctx)
	if err != nil {
		return err
	}
	end := secs(s.total)
	limit := end - s.cfg.Holdback.Seconds()
	tol := s.cfg.TimeTolerance.Seconds()
	n, whole := 0, 0 // agreed words; of them, up to the last closed segment
	if len(s.prev) == s.cfg.Agree-1 {
	agree:
		for n < len(hyp) && hyp[n].End <= limit {
			closed := hyp[n].closes
			for _, p := range s.prev {
				if n >= len(p) || normWord(hyp[n].Word.Word) != normWord(p[n].Word.Word) || math.Abs(hyp[n].End-p[n].End) > tol {
					break agree
				}
				closed = closed && p[n].closes
			}
			n++
			if closed {
				whole = n
			}
		}
	}
	if !s.cfg.Words {
		n = whole
	}
	s.commit(hyp[:n])
	if n > 0 && n < len(hyp) {
		s.dropToQuiet(hyp[n].End)
	}
	hyp = hyp[n:]
	if len(s.buf) > samplesOf(s.cfg.MaxWindow) {
		// Too long without agreement: the window's closed segments are
		// committed as they stand (as the offline decoder moves on to the
		// last segment boundary of its window), or when there are none,
		// the words heard in the window's first half, so the window stays
		// bounded.
		cut := secs(s.bufStart) + s.cfg.MaxWindow.Seconds()/2
		k := 0
		for i, w := range hyp {
			if w.closes && w.End <= limit {
				k = i + 1
			}
		}
		if k == 0 {
			for k < len(hyp) && hyp[k].End <= cut {
				k++
			}
		} else {
			cut = hyp[k-1].End
		}
		s.commit(hyp[:k])
		if k > 0 && k < len(hyp) {
			s.dropToQuiet(hyp[k].End)
			cut = secs(s.bufStart)
		}
		hyp = hyp[k:]
		if c := int(cut * SampleRate); c > s.bufStart {
			s.drop(min(c-s.bufStart, len(s.buf)))
		}
		s.prev = nil // older hypotheses covered the dropped audio
	}
	// Older hypotheses lose the words just committed (they agreed on them).
	keep := s.prev[max(0, len(s.prev)-(s.cfg.Agree-2)):]
	s.prev = s.prev[:0:0]
	for _, p := range keep {
		s.prev = append(s.prev, p[min(n, len(p)):])
	}
	s.prev = append(s.prev, hyp)
	s.setTentative(hyp)
	return nil
}

// EndUtterance ends the utterance in the window as a pause would: its
// words are committed now. For a caller that stops feeding in the middle
// of speech (a meeting's gate closing on the other side's echo), whose
// words would otherwise wait for the next speech, or for Finish.
func (s *Streamer) EndUtterance(ctx context.Context) error {
	if err := s.feed(ctx, nil); err != nil { // what a failed call left pending
		return err
	}
	if s.cut && !s.det.SpeechSeen() {
		return nil // ended already, and nothing heard since
	}
	return s.endUtterance(ctx)
}

// endUtterance commits everything the window holds at a pause and starts
// the next window after it.
func (s *Streamer) endUtterance(ctx context.Context) error {
	if len(s.buf) > 0 && (!s.cut || s.det.SpeechSeen()) {
		// One decode, unlike Finish: decoding what a pass leaves out here
		// too measured worse on the speechkit stream (TestSpeechkitStream,
		// WER against what was spoken 0.42 -> 0.48), so a sentence a pass
		// leaves out at a pause is still lost (the next window keeps only
		// the last 300 ms).
		hyp, err := s.hypothesis(ctx)
		if err != nil {
			return err
		}
		s.commit(hyp)
	}
	s.setTentative(nil)
	s.prev = nil
	if keep := samplesOf(300 * time.Millisecond); len(s.buf) > keep {
		s.drop(len(s.buf) - keep)
	}
	s.det, s.speaking = vad.NewDetector(vad.Config{}), false
	s.cut = true
	return nil
}

// finalPasses bounds the decodes commitAll spends on one window.
const finalPasses = 4

// commitAll decodes the window and commits everything in it, as the stream
// finishes. One decode may end its text before the window does: a model
// that closes a segment and judges the audio after it cut off stops there
// (a single pass, as a step decodes), and the sentences after it would be
// lost. So while the voice-activity detector
// heard speech begin after the last committed word, the rest of the window
// is decoded again, conditioned on what was just committed. An onset, not
// any speech, decides: the detector bridges the gaps inside words, so a
// last word whose end the alignment placed early costs no decode.
func (s *Streamer) commitAll(ctx context.Context) error {
	for range finalPasses {
		hyp, err := s.hypothesis(ctx)
		if err != nil {
			return err
		}
		s.commit(hyp)
		if len(hyp) == 0 || s.onset <= hyp[len(hyp)-1].End || len(s.buf) < samplesOf(100*time.Millisecond) {
			return nil
		}
	}
	return nil
}

// commit appends words to the committed text, reports them, and moves the
// window start past them.
func (s *Streamer) commit(hw []hypWord) {
	if len(hw) == 0 {
		return
	}
	var sb strings.Builder
	ws := make([]Word, len(hw))
	for i, w := range hw {
		ws[i] = w.Word
		sb.WriteString(w.Word.Word)
	}
	s.committed = append(s.committed, ws...)
	seg := Segment{ID: len(s.segs), Start: ws[0].Start, End: ws[len(ws)-1].End, Text: sb.String(), Words: ws}
	s.segs = append(s.segs, seg)
	s.emit(StreamEvent{Type: EventCommitted, Text: seg.Text, AudioStart: seg.Start, AudioEnd: seg.End})
	if c := int(math.Round(seg.End*SampleRate)) - s.bufStart; c > 0 {
		s.drop(min(c, len(s.buf)))
	}
}

// dropToQuiet moves the window start on from the end of the committed
// words to the quietest 20 ms in the next 0.8 s, or up to next (the next
// word's end) when that is later, at most a second on. Word ends are
// approximate (the kit model put a clip's last word 0.8 s before its
// end); a window that begins in the tail of a committed word makes the
// model hear a word there (the kit model heard "and more formal" for "of
// the more formal", and once another clip's sentence).
func (s *Streamer) dropToQuiet(next float64) {
	const frame, hop = SampleRate / 50, SampleRate / 100
	to := min(max(int(next*SampleRate)-s.bufStart, SampleRate*4/5), SampleRate, len(s.buf))
	best, least := 0, math.Inf(1)
	for i := 0; i+frame <= to; i += hop {
		e := 0.0
		for _, v := range s.buf[i : i+frame] {
			e += float64(v) * float64(v)
		}
		if e < least {
			best, least = i+frame/2, e
		}
	}
	s.drop(best)
}

func (s *Streamer) drop(n int) {
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	s.bufStart += n
}

// setTentative reports the uncommitted tail when it changed.
func (s *Streamer) setTentative(ws []hypWord) {
	var sb strings.Builder
	for _, w := range ws {
		sb.WriteString(w.Word.Word)
	}
	text := sb.String()
	if text == s.tentative {
		return
	}
	s.tentative = text
	ev := StreamEvent{Type: EventTentative, Text: text, AudioEnd: secs(s.total)}
	if len(ws) > 0 {
		ev.AudioStart = ws[0].Start
	} else {
		ev.AudioStart = ev.AudioEnd
	}
	s.emit(ev)
}

// normWord compares words without case, spacing or punctuation.
func normWord(w string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, w)
}

// EventFinal ends a stream's events: the whole transcript.
const EventFinal = "final"

// WallEvent is a StreamEvent stamped with Wall, the seconds since the
// stream started: the JSON line of `hark stream --json` and the message
// of the API's /v1/audio/stream, so that anyone can measure the lag
// wall - audio_end.
type WallEvent struct {
	StreamEvent
	Wall float64 `json:"wall"`
}

// Run feeds the streamer from in until it is closed (then finishes) or
// ctx ends. Chunks that arrived while a decode ran are written together,
// up to MaxWindow of audio, so a slow decoder catches up in one step
// instead of falling behind. Memory stays bounded however fast in is fed:
// Run takes nothing from in while the window holds more than
// 2×MaxWindow, stepping (each such step drops audio) until it does not,
// so a sender that outruns the decoder waits on in.
func (s *Streamer) Run(ctx context.Context, in <-chan []float32) (*Result, error) {
	var pend []float32
	for {
		if err := s.workDown(ctx, 2*samplesOf(s.cfg.MaxWindow)); err != nil {
			return nil, err
		}
		var x []float32
		var ok bool
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case x, ok = <-in:
		}
		if !ok {
			return s.Finish(ctx)
		}
		pend = append(pend[:0], x...)
	drain:
		for len(pend) < samplesOf(s.cfg.MaxWindow) {
			select {
			case x, ok = <-in:
				if !ok {
					break drain
				}
				pend = append(pend, x...)
			default:
				break drain
			}
		}
		if err := s.Write(ctx, pend); err != nil {
			return nil, err
		}
		if !ok {
			return s.Finish(ctx)
		}
	}
}

// Buffered is the audio the streamer holds: its window and what a failed
// Write left pending, in samples.
func (s *Streamer) Buffered() int { return len(s.buf) + len(s.pend) }

// workDown steps while the window holds more than limit samples (a step
// past MaxWindow always drops audio).
func (s *Streamer) workDown(ctx context.Context, limit int) error {
	for len(s.buf) > limit {
		start := s.bufStart
		if err := s.step(ctx); err != nil {
			return err
		}
		if s.bufStart == start {
			break
		}
	}
	return nil
}
