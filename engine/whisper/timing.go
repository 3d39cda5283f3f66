package whisper

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Word timestamps follow the reference: the cross-attention weights of the
// alignment heads over the text tokens are normalised per frame, median
// filtered, and aligned to the audio frames by dynamic time warping (on
// the backend: plan.WhisperAlign); each word starts at the frame where its
// first token's row is entered.

// TokenText gives the raw bytes of a token (special tokens as "<|...|>").
type TokenText interface {
	TextDecoder
	TokenBytes(t int32) []byte
}

const (
	medfiltWidth        = 7
	tokensPerSecond     = SampleRate / HopLength / 2 // 50 audio tokens per second
	prependPunctuations = "\"'“¿([{-"
	appendPunctuations  = "\"'.。,，!！?？:：”)]}、"
)

type wordTiming struct {
	word        string
	tokens      []int32
	start, end  float64
	probability float64
}

// alignmentHeads are the (layer, head) pairs used for timing: the
// reference's default for models without a preset, every head of the
// upper half of the decoder.
func (h HParams) alignmentHeads() [][2]int {
	var out [][2]int
	for l := h.NTextLayer / 2; l < h.NTextLayer; l++ {
		for hd := range h.NTextHead {
			out = append(out, [2]int{l, hd})
		}
	}
	return out
}

// findAlignment times the words of textTokens in the window last encoded,
// whose audio covers numFrames mel frames. The backend aligns them
// (PassAlignWords after the forced pass); the host groups the tokens into
// words.
func (m *Model) findAlignment(sp Specials, tt TokenText, sotSeq []int32, textTokens []int32, numFrames int) ([]wordTiming, error) {
	if len(textTokens) == 0 {
		return nil, nil
	}
	tokens := append(append(append([]int32(nil), sotSeq...), sp.NoTimestamps), textTokens...)
	tokens = append(tokens, sp.EOT)
	first := len(sotSeq)
	jumps, logprobs, err := m.AlignWords(tokens, first, min(numFrames/2, m.H.NAudioCtx))
	if err != nil {
		return nil, err
	}
	// Probability of each text token among text tokens, given its prefix
	// (row first+i predicts text token i).
	probs := make([]float64, len(textTokens))
	for i := range probs {
		probs[i] = math.Exp(float64(logprobs[first+i]))
	}

	words, wordToks := splitToWordTokens(sp, tt, append(append([]int32(nil), textTokens...), sp.EOT))
	if len(wordToks) <= 1 {
		return nil, nil
	}
	bounds := make([]int, len(wordToks))
	for i := 1; i < len(wordToks); i++ {
		bounds[i] = bounds[i-1] + len(wordToks[i-1])
	}
	// The path's rows are the text tokens (from the <|notimestamps|> row,
	// which predicts the first) and the final EOT: each row's first frame.
	jumpTimes := make([]float64, len(jumps))
	for i, j := range jumps {
		jumpTimes[i] = float64(j) / tokensPerSecond
	}
	out := make([]wordTiming, 0, len(words)-1)
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]
		var p float64
		for _, v := range probs[a:min(b, len(probs))] {
			p += v
		}
		if n := min(b, len(probs)) - a; n > 0 {
			p /= float64(n)
		}
		out = append(out, wordTiming{word: words[i], tokens: wordToks[i], start: clampAt(jumpTimes, a), end: clampAt(jumpTimes, b), probability: p})
	}
	return out, nil
}

func clampAt(s []float64, i int) float64 {
	if i < len(s) {
		return s[i]
	}
	return s[len(s)-1]
}

// splitToWordTokens groups tokens into words: pieces that start with a
// space, are punctuation, or are special start a new word (languages
// without spaces would split on Unicode boundaries instead).
func splitToWordTokens(sp Specials, tt TokenText, tokens []int32) ([]string, [][]int32) {
	subwords, subTokens := splitOnUnicode(tt, tokens)
	var words []string
	var wordToks [][]int32
	for i, sw := range subwords {
		special := subTokens[i][0] >= sp.EOT
		withSpace := strings.HasPrefix(sw, " ")
		punct := isPunctuation(strings.TrimSpace(sw))
		if special || withSpace || punct || len(words) == 0 {
			words = append(words, sw)
			wordToks = append(wordToks, append([]int32(nil), subTokens[i]...))
		} else {
			words[len(words)-1] += sw
			wordToks[len(wordToks)-1] = append(wordToks[len(wordToks)-1], subTokens[i]...)
		}
	}
	return words, wordToks
}

// splitOnUnicode cuts the token list where the decoded bytes form complete
// characters.
func splitOnUnicode(tt TokenText, tokens []int32) ([]string, [][]int32) {
	var words []string
	var groups [][]int32
	var cur []int32
	var buf []byte
	for _, t := range tokens {
		cur = append(cur, t)
		buf = append(buf, tt.TokenBytes(t)...)
		if utf8.Valid(buf) {
			words = append(words, string(buf))
			groups = append(groups, cur)
			cur, buf = nil, nil
		}
	}
	if len(cur) > 0 {
		words = append(words, strings.ToValidUTF8(string(buf), "\uFFFD"))
		groups = append(groups, cur)
	}
	return words, groups
}

// isPunctuation matches Python's `s in string.punctuation`: a substring
// of the ASCII punctuation run (the empty string included).
func isPunctuation(s string) bool {
	return strings.Contains("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s)
}

// mergePunctuations attaches leading punctuation to the following word and
// trailing punctuation to the preceding one.
func mergePunctuations(a []wordTiming) {
	for i, j := len(a)-2, len(a)-1; i >= 0; i-- {
		prev, next := &a[i], &a[j]
		if strings.HasPrefix(prev.word, " ") && strings.Contains(prependPunctuations, strings.TrimSpace(prev.word)) {
			next.word = prev.word + next.word
			next.tokens = append(append([]int32(nil), prev.tokens...), next.tokens...)
			prev.word, prev.tokens = "", nil
		} else {
			j = i
		}
	}
	for i, j := 0, 1; j < len(a); j++ {
		prev, next := &a[i], &a[j]
		if !strings.HasSuffix(prev.word, " ") && next.word != "" && strings.Contains(appendPunctuations, next.word) {
			prev.word += next.word
			prev.tokens = append(prev.tokens, next.tokens...)
			next.word, next.tokens = "", nil
		} else {
			i = j
		}
	}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// addWordTimestamps fills the words of the segments decoded from one
// window and adjusts segment bounds as the reference does.
func (m *Model) addWordTimestamps(sp Specials, tt TokenText, sotSeq []int32, segs []Segment, numFrames int, lastSpeech float64) error {
	if len(segs) == 0 {
		return nil
	}
	perSeg := make([][]int32, len(segs))
	var text []int32
	for i, s := range segs {
		perSeg[i] = textTokens(s.Tokens, sp)
		text = append(text, perSeg[i]...)
	}
	align, err := m.findAlignment(sp, tt, sotSeq, text, numFrames)
	if err != nil {
		return err
	}
	var durs []float64
	for _, a := range align {
		if d := a.end - a.start; d != 0 {
			durs = append(durs, d)
		}
	}
	median := 0.0
	if len(durs) > 0 {
		s := slices.Clone(durs)
		slices.Sort(s)
		if len(s)%2 == 1 {
			median = s[len(s)/2]
		} else {
			median = (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
	}
	median = min(0.7, median)
	maxDur := median * 2
	if len(durs) > 0 {
		const ends = ".。!！?？"
		for i := 1; i < len(align); i++ {
			if align[i].end-align[i].start > maxDur {
				if align[i].word != "" && strings.Contains(ends, align[i].word) {
					align[i].end = align[i].start + maxDur
				} else if align[i-1].word != "" && strings.Contains(ends, align[i-1].word) {
					align[i].start = align[i].end - maxDur
				}
			}
		}
	}
	mergePunctuations(align)

	timeOffset := float64(segs[0].Seek*HopLength) / SampleRate
	wi := 0
	for si := range segs {
		seg := &segs[si]
		saved := 0
		var words []Word
		for wi < len(align) && saved < len(perSeg[si]) {
			a := align[wi]
			if a.word != "" {
				words = append(words, Word{Word: a.word, Start: round2(timeOffset + a.start), End: round2(timeOffset + a.end), Probability: a.probability})
			}
			saved += len(a.tokens)
			wi++
		}
		if len(words) > 0 {
			w0 := &words[0]
			if w0.End-lastSpeech > median*4 && (w0.End-w0.Start > maxDur || (len(words) > 1 && words[1].End-w0.Start > maxDur*2)) {
				if len(words) > 1 && words[1].End-words[1].Start > maxDur {
					boundary := max(words[1].End/2, words[1].End-maxDur)
					w0.End, words[1].Start = boundary, boundary
				}
				w0.Start = max(0, w0.End-maxDur)
			}
			if seg.Start < w0.End && seg.Start-0.5 > w0.Start {
				w0.Start = max(0, min(w0.End-median, seg.Start))
			} else {
				seg.Start = w0.Start
			}
			wl := &words[len(words)-1]
			if seg.End > wl.Start && seg.End+0.5 < wl.End {
				wl.End = max(wl.Start+median, seg.End)
			} else {
				seg.End = wl.End
			}
			lastSpeech = seg.End
		}
		seg.Words = words
	}
	return nil
}
