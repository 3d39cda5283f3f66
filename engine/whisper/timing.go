package whisper

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Word timestamps follow the reference: the cross-attention weights of the
// alignment heads over the text tokens are normalised per frame, median
// filtered, and aligned to the audio frames by dynamic time warping; each
// word starts at the frame where its first token's row is entered.

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
// whose audio covers numFrames mel frames.
func (m *Model) findAlignment(sp Specials, tt TokenText, sotSeq []int32, textTokens []int32, numFrames int) ([]wordTiming, error) {
	if len(textTokens) == 0 {
		return nil, nil
	}
	tokens := append(append(append([]int32(nil), sotSeq...), sp.NoTimestamps), textTokens...)
	tokens = append(tokens, sp.EOT)
	logits, weights, err := m.Align(tokens)
	if err != nil {
		return nil, err
	}
	nv := m.H.NVocab
	nTok := len(tokens)
	// Probability of each text token among text tokens, given its prefix.
	probs := make([]float64, len(textTokens))
	for i, t := range textTokens {
		row := logits[(len(sotSeq)+i)*nv : (len(sotSeq)+i)*nv+int(sp.EOT)]
		probs[i] = math.Exp(float64(logSoftmaxAt(row, t)))
	}

	nctx := m.H.NAudioCtx
	cols := min(numFrames/2, nctx)
	heads := m.H.alignmentHeads()
	// matrix[token][frame], averaged over heads.
	matrix := make([]float64, nTok*cols)
	w := make([]float64, nTok*cols)
	for _, lh := range heads {
		src := weights[lh[0]][lh[1]*nTok*nctx:]
		// Renormalise over the first cols frames: the reference takes the
		// softmax of the attention scores restricted to the audio.
		for t := range nTok {
			row := src[t*nctx : t*nctx+cols]
			var s float64
			for _, v := range row {
				s += float64(v)
			}
			for j, v := range row {
				w[t*cols+j] = float64(v) / s
			}
		}
		// Standardise each frame over the tokens (population std).
		for j := range cols {
			var mean, sq float64
			for t := range nTok {
				mean += w[t*cols+j]
			}
			mean /= float64(nTok)
			for t := range nTok {
				d := w[t*cols+j] - mean
				sq += d * d
			}
			std := math.Sqrt(sq / float64(nTok))
			for t := range nTok {
				w[t*cols+j] = (w[t*cols+j] - mean) / std
			}
		}
		for t := range nTok {
			medianFilter(w[t*cols:(t+1)*cols], medfiltWidth)
		}
		for i, v := range w {
			matrix[i] += v / float64(len(heads))
		}
	}
	// The rows that predict each text token and the final EOT (from the
	// <|notimestamps|> position to the last text token), negated into a cost.
	first := len(sotSeq)
	rows := len(textTokens) + 1
	cost := make([]float64, rows*cols)
	for i := range rows {
		for j := range cols {
			cost[i*cols+j] = -matrix[(first+i)*cols+j]
		}
	}
	textIdx, timeIdx := dtw(cost, rows, cols)

	words, wordToks := splitToWordTokens(sp, tt, append(append([]int32(nil), textTokens...), sp.EOT))
	if len(wordToks) <= 1 {
		return nil, nil
	}
	bounds := make([]int, len(wordToks))
	for i := 1; i < len(wordToks); i++ {
		bounds[i] = bounds[i-1] + len(wordToks[i-1])
	}
	var jumpTimes []float64
	for i := range textIdx {
		if i == 0 || textIdx[i] != textIdx[i-1] {
			jumpTimes = append(jumpTimes, float64(timeIdx[i])/tokensPerSecond)
		}
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

// medianFilter replaces x by its running median over width samples, with
// reflect padding at both ends (as the reference does).
func medianFilter(x []float64, width int) {
	pad := width / 2
	n := len(x)
	if n <= pad {
		return
	}
	padded := make([]float64, n+2*pad)
	for i := range padded {
		j := i - pad
		if j < 0 {
			j = -j
		} else if j >= n {
			j = 2*(n-1) - j
		}
		padded[i] = x[j]
	}
	win := make([]float64, width)
	for i := range n {
		copy(win, padded[i:i+width])
		slices.Sort(win)
		x[i] = win[pad]
	}
}

// dtw aligns rows to columns along the cheapest monotone path; it returns
// the path's row and column indices from (0,0) to (rows-1, cols-1).
// Ties prefer the diagonal, then the vertical step, as the reference does.
func dtw(x []float64, rows, cols int) (rowIdx, colIdx []int) {
	inf := math.Inf(1)
	w := cols + 1
	cost := make([]float64, (rows+1)*w)
	trace := make([]int8, (rows+1)*w)
	for i := range cost {
		cost[i] = inf
		trace[i] = -1
	}
	cost[0] = 0
	for j := 1; j <= cols; j++ {
		for i := 1; i <= rows; i++ {
			c0, c1, c2 := cost[(i-1)*w+j-1], cost[(i-1)*w+j], cost[i*w+j-1]
			var c float64
			var t int8
			switch {
			case c0 < c1 && c0 < c2:
				c, t = c0, 0
			case c1 < c0 && c1 < c2:
				c, t = c1, 1
			default:
				c, t = c2, 2
			}
			cost[i*w+j] = x[(i-1)*cols+j-1] + c
			trace[i*w+j] = t
		}
	}
	for j := range w {
		trace[j] = 2
	}
	for i := 0; i <= rows; i++ {
		trace[i*w] = 1
	}
	i, j := rows, cols
	for i > 0 || j > 0 {
		rowIdx = append(rowIdx, i-1)
		colIdx = append(colIdx, j-1)
		switch trace[i*w+j] {
		case 0:
			i, j = i-1, j-1
		case 1:
			i--
		default:
			j--
		}
	}
	slices.Reverse(rowIdx)
	slices.Reverse(colIdx)
	return rowIdx, colIdx
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
