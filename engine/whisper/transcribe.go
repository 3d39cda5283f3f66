package whisper

import (
	"context"
	"math"
	"slices"
	"strings"
)

// Audio constants shared by every Whisper model.
const (
	SampleRate  = 16000
	HopLength   = 160
	WindowSecs  = 30
	ChunkFrames = WindowSecs * SampleRate / HopLength // 3000 mel frames per window
)

// TextDecoder turns text tokens into text.
type TextDecoder interface {
	Decode(tokens []int32) string
}

// TranscribeOptions follow the reference transcribe()'s options.
type TranscribeOptions struct {
	DecodeOptions
	// Temperatures tried in turn when a window fails the thresholds
	// (default 0, 0.2, ..., 1.0). A single entry disables fallback.
	Temperatures []float32
	// CompressionRatioThreshold (2.4), LogprobThreshold (-1.0) and
	// NoSpeechThreshold (0.6) drive fallback and silence skipping; NaN
	// disables a threshold.
	CompressionRatioThreshold float64
	LogprobThreshold          float64
	NoSpeechThreshold         float64
	// ConditionOnPreviousText feeds earlier text as the next window's prompt.
	ConditionOnPreviousText bool
	// InitialPrompt tokens precede the first window (custom vocabulary).
	InitialPrompt []int32
	// Vocabulary tokens open every window's prompt, earlier text filling
	// the rest of its n_text_ctx/2-1 tokens, so a user's terms steer the
	// whole file rather than only its first windows (internal/vocab).
	Vocabulary []int32
	// WordTimestamps times every word (cross-attention alignment).
	WordTimestamps bool
	// StopAtAudioEnd ends a window's sequence at a timestamp within 100 ms
	// of the end of the audio, as whisper.cpp does, instead of letting the
	// model go on into the zeros past it (the reference's transcribe()
	// does): a model that knows the text continues it there, with words
	// nobody said.
	StopAtAudioEnd bool
	// OnSegment, if set, receives each segment as soon as its window is done.
	OnSegment func(Segment)
	// OnProgress, if set, receives the fraction of audio processed.
	OnProgress func(done float64)
	// MaxPasses, when positive, stops after that many windows even if
	// audio is left (a streaming step must cost one encoder pass).
	MaxPasses int
	// BeforeWindow, if set, runs before every 30-s window after the
	// first; an error stops the transcription with it. The model is not
	// in use while it runs, so a cache can lend it to a more urgent
	// caller between windows (a dictation during a file job).
	BeforeWindow func(ctx context.Context) error
	// OnWindow, if set, receives every decoded window (its spectrogram,
	// options and accepted result) before it is split into segments, so
	// a test can replay the exact decode on another backend (ForceDecode).
	OnWindow func(WindowTrace)
}

// DefaultTranscribeOptions are the reference implementation's defaults.
func DefaultTranscribeOptions() TranscribeOptions {
	return TranscribeOptions{
		DecodeOptions:             DecodeOptions{MaxInitialTimestamp: 1.0, BestOf: 5},
		Temperatures:              []float32{0, 0.2, 0.4, 0.6, 0.8, 1.0},
		CompressionRatioThreshold: 2.4,
		LogprobThreshold:          -1.0,
		NoSpeechThreshold:         0.6,
		ConditionOnPreviousText:   true,
		StopAtAudioEnd:            true,
	}
}

// Segment is a timed piece of transcript, shaped like the reference's.
type Segment struct {
	ID               int     `json:"id"`
	Seek             int     `json:"seek"`
	Start            float64 `json:"start"`
	End              float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int32 `json:"tokens"`
	Temperature      float32 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
	Words            []Word  `json:"words,omitempty"`
}

// Word is a word with its time span.
type Word struct {
	Word        string  `json:"word"`
	Start       float64 `json:"start"`
	End         float64 `json:"end"`
	Probability float64 `json:"probability"`
}

// Result is a whole transcription.
type Result struct {
	Text     string    `json:"text"`
	Segments []Segment `json:"segments"`
	Language string    `json:"language"`
	// Duration is the audio's length in seconds (not in the reference's
	// JSON shape; the API's verbose_json reports it).
	Duration float64 `json:"-"`
}

// MelWindows is a log-mel spectrogram read a window at a time
// (mel.Spectrogram in memory, mel.SpooledSpectrogram on disk): dst,
// an [n_mels][width] matrix, gets frames [start, start+n) and zeros after
// them.
type MelWindows interface {
	ReadWindow(dst []float32, start, n, width int) error
}

// Transcribe decodes a log-mel spectrogram of the whole audio, computed
// with 30 s of silence appended (contentFrames of its frames are audio),
// window by window as the reference does: each window starts where the
// last complete segment ended. Only the current window is read from mel.
func (m *Model) Transcribe(ctx context.Context, mel MelWindows, contentFrames int, tok TokenText, opt TranscribeOptions) (*Result, error) {
	sp, err := SpecialsFor(m.H.NVocab)
	if err != nil {
		return nil, err
	}
	nMels := m.H.NMels
	nFrames := m.H.NFrames()
	inputStride := nFrames / m.H.NAudioCtx // mel frames per output token: 2
	timePrecision := float64(inputStride*HopLength) / SampleRate
	window := make([]float32, nMels*nFrames)
	res := &Result{Language: opt.Language}
	if res.Language == "" {
		res.Language = "en"
	}

	allTokens := append([]int32(nil), opt.InitialPrompt...)
	lastSpeech := 0.0
	promptResetSince := 0
	seek := 0
	for pass := 0; seek < contentFrames && (opt.MaxPasses <= 0 || pass < opt.MaxPasses); pass++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if seek > 0 && opt.BeforeWindow != nil {
			if err := opt.BeforeWindow(ctx); err != nil {
				return nil, err
			}
		}
		timeOffset := float64(seek*HopLength) / SampleRate
		segSize := min(nFrames, contentFrames-seek)
		segDuration := float64(segSize*HopLength) / SampleRate
		if err := mel.ReadWindow(window, seek, segSize, nFrames); err != nil {
			return nil, err
		}
		if err := m.encode(ctx, window); err != nil {
			return nil, err
		}
		if opt.Language == "" && m.H.Multilingual() {
			lang, _, err := m.DetectLanguage()
			if err != nil {
				return nil, err
			}
			opt.Language, res.Language = lang, lang
		}
		dopt := opt.DecodeOptions
		dopt.Ctx = ctx
		dopt.Prompt = withVocabulary(opt.Vocabulary, allTokens[promptResetSince:], m.H.NTextCtx/2-1)
		if opt.StopAtAudioEnd && !dopt.WithoutTimestamps {
			dopt.EndTimestamp = endTimestamp(sp, contentFrames-seek, nFrames, inputStride)
		}
		r, cr, err := m.decodeWithFallback(sp, tok, dopt, &opt)
		if err != nil {
			return nil, err
		}
		if opt.OnWindow != nil {
			dopt.Temperature, dopt.Ctx = r.Temperature, nil
			opt.OnWindow(WindowTrace{Seek: seek, Mel: slices.Clone(window), Options: dopt, Result: r})
		}
		if !math.IsNaN(opt.NoSpeechThreshold) && r.NoSpeechProb > opt.NoSpeechThreshold &&
			(math.IsNaN(opt.LogprobThreshold) || r.AvgLogprob <= opt.LogprobThreshold) {
			seek += segSize // silence: skip the window
			continue
		}

		newSeg := func(start, end float64, toks []int32) Segment {
			return Segment{Seek: seek, Start: start, End: end, Text: tok.Decode(textTokens(toks, sp)),
				Tokens: append([]int32(nil), toks...), Temperature: r.Temperature, AvgLogprob: r.AvgLogprob,
				CompressionRatio: cr, NoSpeechProb: r.NoSpeechProb}
		}
		toks := r.Tokens
		isTs := func(i int) bool { return sp.IsTimestamp(toks[i]) }
		n := len(toks)
		singleTsEnding := n >= 2 && !isTs(n-2) && isTs(n-1)
		var consecutive []int
		for i := 1; i < n; i++ {
			if isTs(i-1) && isTs(i) {
				consecutive = append(consecutive, i)
			}
		}
		var cur []Segment
		if len(consecutive) > 0 {
			slices := consecutive
			if singleTsEnding {
				slices = append(slices, n)
			}
			last := 0
			for _, s := range slices {
				part := toks[last:s]
				startPos := float64(part[0] - sp.TimestampBegin)
				endPos := float64(part[len(part)-1] - sp.TimestampBegin)
				cur = append(cur, newSeg(timeOffset+startPos*timePrecision, timeOffset+endPos*timePrecision, part))
				last = s
			}
			if singleTsEnding {
				seek += segSize
			} else {
				seek += int(toks[last-1]-sp.TimestampBegin) * inputStride
			}
		} else {
			duration := segDuration
			for i := n - 1; i >= 0; i-- {
				if isTs(i) {
					if toks[i] != sp.TimestampBegin {
						duration = float64(toks[i]-sp.TimestampBegin) * timePrecision
					}
					break
				}
			}
			cur = append(cur, newSeg(timeOffset, timeOffset+duration, toks))
			seek += segSize
		}
		if opt.WordTimestamps {
			if err := ctx.Err(); err != nil {
				return nil, err // the alignment pass is not stopped inside
			}
			init, sotIndex, err := m.initialTokens(sp, &DecodeOptions{Language: opt.Language, Task: opt.Task})
			if err != nil {
				return nil, err
			}
			if err := m.addWordTimestamps(sp, tok, init[sotIndex:], cur, segSize, lastSpeech); err != nil {
				return nil, err
			}
			end, ok := lastEnd(cur)
			if !singleTsEnding && ok && end > timeOffset {
				seek = int(math.RoundToEven(end * SampleRate / HopLength))
			}
			if ok {
				lastSpeech = end
			}
		}
		for i := range cur {
			if cur[i].Start == cur[i].End || strings.TrimSpace(cur[i].Text) == "" {
				cur[i].Text, cur[i].Tokens, cur[i].Words = "", nil, nil
			}
			cur[i].ID = len(res.Segments)
			res.Segments = append(res.Segments, cur[i])
			allTokens = append(allTokens, cur[i].Tokens...)
			if opt.OnSegment != nil {
				opt.OnSegment(cur[i])
			}
		}
		if !opt.ConditionOnPreviousText || r.Temperature > 0.5 {
			promptResetSince = len(allTokens)
		}
		if opt.OnProgress != nil {
			opt.OnProgress(min(1, float64(seek)/float64(contentFrames)))
		}
	}
	var sb strings.Builder
	for _, s := range res.Segments {
		sb.WriteString(s.Text)
	}
	res.Text = sb.String()
	return res, nil
}

// lastEnd is the end of the last word, or of the last segment.
func lastEnd(segs []Segment) (float64, bool) {
	for i := len(segs) - 1; i >= 0; i-- {
		if w := segs[i].Words; len(w) > 0 {
			return w[len(w)-1].End, true
		}
	}
	if len(segs) > 0 {
		return segs[len(segs)-1].End, true
	}
	return 0, false
}

func textTokens(toks []int32, sp Specials) []int32 {
	out := make([]int32, 0, len(toks))
	for _, t := range toks {
		if t < sp.EOT {
			out = append(out, t)
		}
	}
	return out
}

// decodeWithFallback decodes the current window at rising temperatures
// until the result is neither too repetitive nor too unlikely.
func (m *Model) decodeWithFallback(sp Specials, tok TextDecoder, dopt DecodeOptions, opt *TranscribeOptions) (*DecodeResult, float64, error) {
	temps := opt.Temperatures
	if len(temps) == 0 {
		temps = []float32{dopt.Temperature}
	}
	var (
		r  *DecodeResult
		cr float64
	)
	for _, t := range temps {
		dopt.Temperature = t
		var err error
		if r, err = m.DecodeWindow(dopt); err != nil {
			return nil, 0, err
		}
		text := strings.TrimSpace(tok.Decode(textTokens(r.Tokens, sp)))
		cr = CompressionRatio(text)
		fallback := r.Repetitive
		if !math.IsNaN(opt.CompressionRatioThreshold) && cr > opt.CompressionRatioThreshold {
			fallback = true
		}
		if !math.IsNaN(opt.LogprobThreshold) && r.AvgLogprob < opt.LogprobThreshold {
			fallback = true
		}
		if !math.IsNaN(opt.NoSpeechThreshold) && r.NoSpeechProb > opt.NoSpeechThreshold &&
			!math.IsNaN(opt.LogprobThreshold) && r.AvgLogprob < opt.LogprobThreshold {
			fallback = false // silence; the caller skips it
		}
		if !fallback {
			break
		}
	}
	return r, cr, nil
}

// withVocabulary puts vocab first and as much of the end of prev as fits
// in keep tokens after it.
func withVocabulary(vocab, prev []int32, keep int) []int32 {
	if len(vocab) == 0 {
		return prev
	}
	vocab = vocab[:min(len(vocab), keep)]
	room := keep - len(vocab)
	prev = prev[len(prev)-min(len(prev), room):]
	return append(append(make([]int32, 0, len(vocab)+len(prev)), vocab...), prev...)
}

// endTimestamp is the first timestamp token within audioEndMargin of the
// audio's end, left mel frames (10 ms each) after the start of a window of
// nFrames, or 0 when the window ends before the audio does. whisper.cpp's rule: a
// sequence is complete once seek + delta + 10 >= the audio's end.
func endTimestamp(sp Specials, left, nFrames, inputStride int) int32 {
	const audioEndMargin = 10 // frames: 100 ms
	d := max(0, left-audioEndMargin)
	if d >= nFrames {
		return 0
	}
	return sp.TimestampBegin + int32((d+inputStride-1)/inputStride)
}
