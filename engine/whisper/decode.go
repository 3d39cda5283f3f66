package whisper

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/harkapp/hark/engine/plan"
)

// DecodeOptions control the decoding of one 30-s window.
type DecodeOptions struct {
	Task     string // "transcribe" (default) or "translate"; multilingual models only
	Language string // language code; multilingual models only ("" = detect)
	// Temperature 0 decodes greedily; above 0 it samples BestOf candidates.
	Temperature float32
	BestOf      int
	Seed        uint64
	// BeamSize > 1 decodes with beam search when Temperature is 0 (the
	// model must be loaded with Options.Beams >= BeamSize); Patience
	// scales how many finished sequences it collects (1 by default).
	BeamSize int
	Patience float64
	// WithoutTimestamps decodes text only (<|notimestamps|>).
	WithoutTimestamps bool
	// Prompt holds earlier text tokens the window is conditioned on.
	Prompt []int32
	// Suppress lists tokens never sampled (the non-speech symbols and
	// control tokens by default; see Tokenizer.DefaultSuppress).
	Suppress []int32
	// SuppressBlank lists tokens not allowed first (" " and EOT).
	SuppressBlank []int32
	// LogitBias is added to these tokens' logits before the other filters
	// (a user's vocabulary: see internal/vocab).
	LogitBias map[int32]float32
	// MaxInitialTimestamp bounds the first timestamp, in seconds (1.0 by
	// default in the reference); negative means no bound.
	MaxInitialTimestamp float32
	// SampleLen bounds the sampled tokens (n_text_ctx/2 by default).
	SampleLen int
	// EndTimestamp, when positive, ends a sequence at the first sampled
	// timestamp token at or past it, that token kept: where the window's
	// audio ends (see TranscribeOptions.StopAtAudioEnd).
	EndTimestamp int32
	// ChainTokens is how many greedy tokens (beam search steps) the
	// backend decodes between two read-backs of the window's state (when
	// 0: DefaultChainTokens (DefaultBeamChainSteps) on a GPU, 1 on the
	// CPU). The host sees the window's end, and Ctx's
	// cancellation, only at a read-back: fewer tokens waste less work
	// past the end and answer a cancellation sooner, at one host
	// synchronization each.
	ChainTokens int
	// Ctx, when set, is checked before every token (every ChainTokens
	// tokens or steps in a chained window), so a caller that no longer wants the
	// text (a live preview overtaken by the final transcription) gets the
	// model back within a token or a read-back.
	Ctx context.Context
}

// canceled reports the error of a canceled Ctx.
func (o *DecodeOptions) canceled() error {
	if o.Ctx == nil {
		return nil
	}
	return o.Ctx.Err()
}

// DecodeResult is one decoded window.
type DecodeResult struct {
	Tokens       []int32 // sampled tokens, without the final EOT
	SumLogprob   float64
	AvgLogprob   float64
	NoSpeechProb float64
	Temperature  float32
	Language     string
	// Repetitive is set when decoding stopped in a repetition loop (the
	// repeats after the first were cut off).
	Repetitive bool
}

// initialTokens builds [<|startofprev|> prompt…] sot [lang task] [notimestamps].
func (m *Model) initialTokens(sp Specials, opt *DecodeOptions) ([]int32, int, error) {
	var toks []int32
	if len(opt.Prompt) > 0 {
		keep := m.H.NTextCtx/2 - 1
		p := opt.Prompt
		if len(p) > keep {
			p = p[len(p)-keep:]
		}
		toks = append(toks, sp.SOTPrev)
		toks = append(toks, p...)
	}
	sotIndex := len(toks)
	toks = append(toks, sp.SOT)
	if m.H.Multilingual() {
		lang := opt.Language
		if lang == "" {
			lang = "en"
		}
		lt, err := sp.LanguageToken(lang)
		if err != nil {
			return nil, 0, err
		}
		task := sp.Transcribe
		if opt.Task == "translate" {
			task = sp.Translate
		} else if opt.Task != "" && opt.Task != "transcribe" {
			return nil, 0, fmt.Errorf("whisper: unknown task %q", opt.Task)
		}
		toks = append(toks, lt, task)
	}
	if opt.WithoutTimestamps {
		toks = append(toks, sp.NoTimestamps)
	}
	return toks, sotIndex, nil
}

// DecodeWindow decodes the window last passed to Encode.
func (m *Model) DecodeWindow(opt DecodeOptions) (*DecodeResult, error) {
	sp, err := SpecialsFor(m.H.NVocab)
	if err != nil {
		return nil, err
	}
	init, sotIndex, err := m.initialTokens(sp, &opt)
	if err != nil {
		return nil, err
	}
	sampleLen := opt.SampleLen
	if sampleLen <= 0 {
		sampleLen = m.H.NTextCtx / 2
	}
	filter := newLogitFilter(sp, &opt)

	if opt.Temperature == 0 && opt.BeamSize > 1 {
		// The context bound is checked per step, as the reference does.
		return m.decodeBeams(sp, init, sotIndex, sampleLen, filter, opt)
	}
	sampleLen = min(sampleLen, m.H.NTextCtx-len(init))
	candidates := 1
	if opt.Temperature > 0 {
		candidates = max(opt.BestOf, 1)
	}
	var best *DecodeResult
	bestScore := math.Inf(-1)
	for c := range candidates {
		r, err := m.decodeOne(sp, init, sotIndex, sampleLen, filter, opt, uint64(c))
		if err != nil {
			return nil, err
		}
		// The reference's ranker: sum_logprob / length, EOT not counted.
		score := math.Inf(-1)
		if len(r.Tokens) > 0 {
			score = r.SumLogprob / float64(len(r.Tokens))
		}
		if best == nil || score > bestScore {
			best, bestScore = r, score
		}
	}
	return best, nil
}

// newLogitFilter builds the filter opt asks for.
func newLogitFilter(sp Specials, opt *DecodeOptions) *logitFilter {
	f := &logitFilter{sp: sp, bias: opt.LogitBias, suppressBlank: opt.SuppressBlank, suppress: opt.Suppress,
		timestamps: !opt.WithoutTimestamps, maxInitialTsIx: -1}
	if opt.MaxInitialTimestamp >= 0 {
		// 0.02 s per timestamp step; 1.0 s -> index 50.
		f.maxInitialTsIx = int(math.Round(float64(opt.MaxInitialTimestamp) / 0.02))
	}
	return f
}

// decodeOne runs one sequence from the initial tokens to EOT or the length
// limit. Greedy windows run chained on the backend (decodeChained);
// sampling filters and chooses on the host, as greedy windows do with
// hostSelect (the reference the backend's chain is tested against).
func (m *Model) decodeOne(sp Specials, init []int32, sotIndex, sampleLen int, filter *logitFilter, opt DecodeOptions, stream uint64) (*DecodeResult, error) {
	if opt.Temperature == 0 && !m.hostSelect {
		return m.decodeChained(sp, init, sotIndex, sampleLen, filter, opt)
	}
	res := &DecodeResult{Temperature: opt.Temperature, Language: opt.Language}
	logits, pos, err := m.promptWindow(sp, init, sotIndex, res)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opt.Seed, stream))
	for len(res.Tokens) < sampleLen {
		if err := opt.canceled(); err != nil {
			return nil, err
		}
		filter.apply(logits, res.Tokens)
		var tok int32
		if opt.Temperature > 0 {
			tok = sampleTemperature(logits, opt.Temperature, rng)
		} else {
			tok = argmax(logits)
		}
		res.SumLogprob += float64(logSoftmaxAt(logits, tok))
		if tok == sp.EOT {
			break
		}
		res.Tokens = append(res.Tokens, tok)
		if cut := repetitionCut(res.Tokens, sp.TimestampBegin); cut >= 0 {
			res.Tokens, res.Repetitive = res.Tokens[:cut], true
			break
		}
		if opt.EndTimestamp > 0 && tok >= opt.EndTimestamp {
			break
		}
		if pos >= m.H.NTextCtx {
			break
		}
		if logits, err = m.Prompt([]int32{tok}, pos); err != nil {
			return nil, err
		}
		pos++
	}
	res.AvgLogprob = res.SumLogprob / float64(len(res.Tokens)+1)
	return res, nil
}

// promptWindow feeds a window's initial tokens: up to and including SOT
// first, since the no-speech probability (res.NoSpeechProb, when res is
// given) is read from the logits at SOT, then the rest. It returns the
// logits after the last initial token and the next position.
func (m *Model) promptWindow(sp Specials, init []int32, sotIndex int, res *DecodeResult) ([]float32, int, error) {
	logits, err := m.Prompt(init[:sotIndex+1], 0)
	if err != nil {
		return nil, 0, err
	}
	if res != nil {
		res.NoSpeechProb = math.Exp(float64(logSoftmaxAt(logits, sp.NoSpeech)))
	}
	pos := sotIndex + 1
	if rest := init[sotIndex+1:]; len(rest) > 0 {
		if logits, err = m.Prompt(rest, pos); err != nil {
			return nil, 0, err
		}
		pos += len(rest)
	}
	return logits, pos, nil
}

// argmax is the greedy pick (plan.ArgmaxRow: lowest index on ties, NaNs
// never win).
func argmax(s []float32) int32 { return int32(plan.ArgmaxRow(s)) }

func sampleTemperature(logits []float32, temp float32, rng *rand.Rand) int32 {
	m := negInf
	for _, v := range logits {
		m = max(m, v)
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64((v - m) / temp))
	}
	u := rng.Float64() * sum
	var acc float64
	for i, v := range logits {
		acc += math.Exp(float64((v - m) / temp))
		if acc > u {
			return int32(i)
		}
	}
	return argmax(logits)
}

// DetectLanguage returns the most likely language of the window last
// encoded, from the decoder's logits after <|startoftranscript|>, and the
// probability of each language code.
func (m *Model) DetectLanguage() (string, map[string]float64, error) {
	sp, err := SpecialsFor(m.H.NVocab)
	if err != nil {
		return "", nil, err
	}
	if sp.NLanguages == 0 {
		return "en", map[string]float64{"en": 1}, nil
	}
	logits, err := m.Prompt([]int32{sp.SOT}, 0)
	if err != nil {
		return "", nil, err
	}
	langs := logits[sp.SOT+1 : sp.SOT+1+int32(sp.NLanguages)]
	lse := logSumExp(langs)
	probs := make(map[string]float64, len(langs))
	best := 0
	for i, v := range langs {
		probs[Languages[i]] = math.Exp(float64(v - lse))
		if v > langs[best] {
			best = i
		}
	}
	return Languages[best], probs, nil
}

// Runaway repetition ("Thank you. Thank you. ..." on silence or noise) is
// the failure users hate most; the compression-ratio test only catches it
// after a whole window of it. A loop is a unit of at most maxRepeatUnit
// tokens repeated at least minRepeats times, minRepeatSpan tokens in all,
// at the end of the sequence; timestamps compare equal to each other, since
// they advance with every repeat.
const (
	maxRepeatUnit = 24
	minRepeats    = 4
	minRepeatSpan = 24
)

// repetitionCut returns the length that keeps a trailing loop's first
// occurrence, or -1 when toks does not end in a loop.
func repetitionCut(toks []int32, tsBegin int32) int {
	return plan.RepeatCut(toks, tsBegin, maxRepeatUnit, minRepeats, minRepeatSpan)
}
