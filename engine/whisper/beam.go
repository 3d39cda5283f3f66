package whisper

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Beam search follows the reference's BeamSearchDecoder: at each step
// every beam proposes its beam_size+1 likeliest next tokens; candidates
// are ranked by cumulative log-probability (accumulated in float32, as the
// reference's tensor does); those ending in EOT join the finished set
// (up to round(beam_size × patience)), the best beam_size others become
// the next beams. Decoding ends when enough sequences have finished;
// the final choice maximises sum_logprob / length (no length penalty).
// All beams run as one batched decoder pass (PassBeams).

type beamCand struct {
	key    string  // the sampled tokens, as bytes: the reference's dict key
	seq    []int32 // sampled tokens, the new one included
	score  float32
	source int
}

type finishedSeq struct {
	tokens []int32 // without EOT
	score  float32
}

func seqKey(seq []int32) string {
	b := make([]byte, 0, 4*len(seq))
	for _, t := range seq {
		b = append(b, byte(t), byte(t>>8), byte(t>>16), byte(t>>24))
	}
	return string(b)
}

// decodeBeams decodes the current window with beam search.
func (m *Model) decodeBeams(sp Specials, init []int32, sotIndex, sampleLen int, filter *logitFilter, opt DecodeOptions) (*DecodeResult, error) {
	nb := opt.BeamSize
	if nb > m.lay.beams {
		return nil, fmt.Errorf("whisper: beam size %d exceeds the %d beams the model was loaded for", nb, m.lay.beams)
	}
	res := &DecodeResult{Temperature: opt.Temperature, Language: opt.Language}
	logits, pos, err := m.promptWindow(sp, init, sotIndex, res)
	if err != nil {
		return nil, err
	}
	// Every beam starts as the prompt: one prompt pass, copied to the others.
	if err := m.broadcastKV(m.lay.beams, pos); err != nil {
		return nil, err
	}
	// The reference stops once the sequence (prompt included) is longer
	// than the context.
	steps := min(sampleLen, m.H.NTextCtx-len(init)+1)
	st := &modelBeams{m: m, base: pos, pos: pos, nb: nb, feed: make([]int32, m.lay.beams), f: filter}
	toks, sum, err := beamSearch(sp.EOT, opt.EndTimestamp, m.H.NVocab, nb, opt.Patience, steps, logits, st)
	if err != nil {
		return nil, err
	}
	res.Tokens = toks
	res.SumLogprob = float64(sum)
	res.AvgLogprob = res.SumLogprob / float64(len(res.Tokens)+1)
	return res, nil
}

// beamStepper advances the beams' decoder state.
type beamStepper interface {
	// reorder makes beam d continue from beam src[d]'s state.
	reorder(src []int) error
	// step feeds each beam's newest token and returns the next logits,
	// [beam][n_vocab].
	step(feed []int32) ([]float32, error)
	// filter applies the logit filters to rows ([beam][n_vocab], the
	// logits step returned, or on the first step the prompt's, copied to
	// every beam) given each beam's sampled tokens.
	filter(rows []float32, beams [][]int32, first bool) error
}

// modelBeams steps a model's batched beam pass.
type modelBeams struct {
	m    *Model
	base int // the prompt's length: every beam shares positions before it
	pos  int // position of the next token fed
	nb   int
	feed []int32
	f    *logitFilter
}

// filter runs on the backend (PassFilterBeams), or on the host with
// Model.hostSelect.
func (s *modelBeams) filter(rows []float32, beams [][]int32, first bool) error {
	if s.m.hostSelect {
		return hostFilterBeams(s.f, rows, beams)
	}
	return s.m.filterBeams(s.f, rows, beams, first)
}

// hostFilterBeams applies f to every row on the host.
func hostFilterBeams(f *logitFilter, rows []float32, beams [][]int32) error {
	nv := len(rows) / max(len(beams), 1)
	for b, s := range beams {
		f.apply(rows[b*nv:(b+1)*nv], s)
	}
	return nil
}

func (s *modelBeams) reorder(src []int) error { return s.m.reorderKV(src, s.base, s.pos) }

func (s *modelBeams) step(feed []int32) ([]float32, error) {
	copy(s.feed, feed)
	out, err := s.m.StepBeams(s.feed, s.pos)
	if err != nil {
		return nil, err
	}
	s.pos++
	return out[:s.nb*s.m.H.NVocab], nil
}

// beamSearch runs at most steps search steps from the prompt's logits
// (shared by every beam) and returns the chosen sampled tokens, without
// EOT, and their summed log-probability. A sequence also finishes at a
// token >= end when end is positive (DecodeOptions.EndTimestamp), that
// token kept.
func beamSearch(eot, end int32, nv, nb int, patience float64, steps int, first []float32, st beamStepper) ([]int32, float32, error) {
	if patience <= 0 {
		patience = 1
	}
	maxCandidates := int(math.RoundToEven(float64(nb) * patience))
	rows := make([]float32, nb*nv)
	for b := range nb {
		copy(rows[b*nv:(b+1)*nv], first)
	}
	beams := make([][]int32, nb)
	sums := make([]float32, nb)
	var finished []finishedSeq
	finishedKeys := map[string]bool{}
	live := true // beams holds live sequences
	feed := make([]int32, nb)
	lp := make([]float32, nv)
	for i := 0; i < steps; i++ {
		// Candidates in the reference's dict order: beam by beam, each
		// beam's top tokens by decreasing log-probability; a repeated
		// sequence (identical beams at the first step) keeps its first
		// place and takes the later score and source.
		var cands []beamCand
		index := map[string]int{}
		if err := st.filter(rows, beams, i == 0); err != nil {
			return nil, 0, err
		}
		for b := range nb {
			row := rows[b*nv : (b+1)*nv]
			logSoftmax(row, lp)
			for _, tok := range topK(lp, nb+1) {
				seq := append(slices.Clip(beams[b]), tok)
				c := beamCand{key: seqKey(seq), seq: seq, score: sums[b] + lp[tok], source: b}
				if j, ok := index[c.key]; ok {
					cands[j].score, cands[j].source = c.score, c.source
					continue
				}
				index[c.key] = len(cands)
				cands = append(cands, c)
			}
		}
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
		var next []beamCand
		var newlyFinished []finishedSeq
		for _, c := range cands {
			if last := c.seq[len(c.seq)-1]; last == eot || (end > 0 && last >= end) {
				toks := c.seq
				if last == eot {
					toks = c.seq[:len(c.seq)-1]
				}
				newlyFinished = append(newlyFinished, finishedSeq{tokens: toks, score: c.score})
				continue
			}
			next = append(next, c)
			if len(next) == nb {
				break
			}
		}
		// Newly finished sequences are already in decreasing score order.
		for _, f := range newlyFinished {
			if len(finished) >= maxCandidates {
				break
			}
			k := seqKey(f.tokens)
			if !finishedKeys[k] {
				finishedKeys[k] = true
				finished = append(finished, f)
			}
		}
		if len(next) == 0 {
			live = false // every candidate ended
			break
		}
		// With an end token several of a beam's top tokens may finish it,
		// leaving fewer live candidates than beams (odd audio, a model
		// unsure where the window's speech ends): the live ones are
		// repeated to fill the beams, as whisper.cpp does, rather than the
		// window failing. A repeat is the same sequence twice; its
		// candidates merge at the next step.
		for k := len(next); len(next) < nb; {
			next = append(next, next[len(next)%k])
		}
		src := make([]int, nb)
		for b, c := range next {
			beams[b], sums[b], src[b] = c.seq, c.score, c.source
		}
		if err := st.reorder(src); err != nil {
			return nil, 0, err
		}
		if len(finished) >= maxCandidates || i+1 == steps {
			break
		}
		for b := range nb {
			feed[b] = beams[b][len(beams[b])-1]
		}
		out, err := st.step(feed)
		if err != nil {
			return nil, 0, err
		}
		copy(rows, out)
	}

	// Not enough finished: add the live beams, best first.
	if len(finished) < nb && live {
		order := make([]int, nb)
		for b := range order {
			order[b] = b
		}
		sort.SliceStable(order, func(a, b int) bool { return sums[order[a]] > sums[order[b]] })
		for _, b := range order {
			k := seqKey(beams[b])
			if !finishedKeys[k] {
				finishedKeys[k] = true
				finished = append(finished, finishedSeq{tokens: beams[b], score: sums[b]})
			}
			if len(finished) >= nb {
				break
			}
		}
	}
	best := rankSequences(finished)
	return append([]int32(nil), finished[best].tokens...), finished[best].score, nil
}

// rankSequences picks the sequence with the highest sum_logprob / length
// (the reference's MaximumLikelihoodRanker without a length penalty); the
// first wins ties.
func rankSequences(seqs []finishedSeq) int {
	best, bestScore := 0, math.Inf(-1)
	for i, s := range seqs {
		score := math.Inf(-1)
		if len(s.tokens) > 0 {
			score = float64(s.score) / float64(len(s.tokens))
		}
		if i == 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// logSoftmax writes log(softmax(x)) into out, in float32 like the
// reference's log_softmax over float32 logits.
func logSoftmax(x, out []float32) {
	lse := logSumExp(x)
	for i, v := range x {
		out[i] = v - lse
	}
}

// topK returns the indices of the k largest values, largest first (the
// lower index first among equal values).
func topK(x []float32, k int) []int32 {
	idx := make([]int32, 0, k+1)
	for i, v := range x {
		if len(idx) == k && !(v > x[idx[k-1]]) {
			continue
		}
		// insert keeping descending order; equal values stay in index order
		j := len(idx)
		idx = append(idx, int32(i))
		for j > 0 && v > x[idx[j-1]] {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = int32(i)
		if len(idx) > k {
			idx = idx[:k]
		}
	}
	return idx
}
