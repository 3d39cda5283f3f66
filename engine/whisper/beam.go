package whisper

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/harkapp/hark/engine/plan"
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
	if nb+1 > plan.SampleMaxTop {
		return nil, fmt.Errorf("whisper: beam size %d: a step ranks at most %d candidates a beam", nb, plan.SampleMaxTop)
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
	var st beamStepper
	if m.hostSelect {
		st = &hostBeams{rows: &modelBeams{m: m, base: pos, pos: pos, nb: nb, feed: make([]int32, m.lay.beams)}, f: filter, first: logits, nv: m.H.NVocab}
	} else {
		if st, err = m.deviceBeams(filter, pos, nb); err != nil {
			return nil, err
		}
	}
	toks, sum, err := beamSearch(sp.EOT, opt.EndTimestamp, nb, opt.Patience, steps, st)
	if err != nil {
		return nil, err
	}
	res.Tokens = toks
	res.SumLogprob = float64(sum)
	res.AvgLogprob = res.SumLogprob / float64(len(res.Tokens)+1)
	return res, nil
}

// beamStepper advances the beams and proposes their candidates.
type beamStepper interface {
	// next returns k candidates for each of the nb beams, [beam][k]
	// tokens (likeliest first, ties to the lower id) and their
	// log-probabilities after the logit filters, beams[b] being beam b's
	// sampled tokens. With src nil they follow the prompt (every beam's);
	// otherwise beam d first continues from beam src[d]'s state and is
	// fed feed[d].
	next(beams [][]int32, src []int, feed []int32, k int) ([]int32, []float32, error)
}

// rowStepper advances the beams' decoder state, their logits read by the
// host.
type rowStepper interface {
	// reorder makes beam d continue from beam src[d]'s state.
	reorder(src []int) error
	// step feeds each beam's newest token and returns the next logits,
	// [beam][n_vocab].
	step(feed []int32) ([]float32, error)
}

// hostBeams ranks each beam's logits row on the host: the reference of
// the backend's PassBeamTop (the same filters, plan.Logprobs as the CPU's
// Sample kernel computes it).
type hostBeams struct {
	rows  rowStepper
	f     *logitFilter
	first []float32 // the prompt's logits
	nv    int
	rec   []float32
}

func (h *hostBeams) next(beams [][]int32, src []int, feed []int32, k int) ([]int32, []float32, error) {
	nb, nv := len(beams), h.nv
	var rows []float32
	if src == nil {
		rows = make([]float32, nb*nv)
		for b := range nb {
			copy(rows[b*nv:(b+1)*nv], h.first)
		}
	} else {
		if err := h.rows.reorder(src); err != nil {
			return nil, nil, err
		}
		out, err := h.rows.step(feed)
		if err != nil {
			return nil, nil, err
		}
		rows = out
	}
	for b, s := range beams {
		h.f.apply(rows[b*nv:(b+1)*nv], s)
	}
	h.rec = slices.Grow(h.rec[:0], plan.SampleLogprobWords)[:plan.SampleLogprobWords]
	toks, lps := make([]int32, nb*k), make([]float32, nb*k)
	for b := range nb {
		plan.Logprobs(h.rec, rows[b*nv:(b+1)*nv], 0, k)
		readTop(h.rec, toks[b*k:(b+1)*k], lps[b*k:(b+1)*k])
	}
	return toks, lps, nil
}

// readTop reads a plan.Sample logprobs record's top tokens into toks and
// lps (len(toks) of them).
func readTop(rec []float32, toks []int32, lps []float32) {
	for j := range toks {
		toks[j] = int32(math.Float32bits(rec[1+2*j]))
		lps[j] = rec[2+2*j]
	}
}

// modelBeams steps a model's batched beam pass, reading the logits back.
type modelBeams struct {
	m    *Model
	base int // the prompt's length: every beam shares positions before it
	pos  int // position of the next token fed
	nb   int
	feed []int32
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

// beamSearch runs at most steps search steps of nb beams and returns the
// chosen sampled tokens, without EOT, and their summed log-probability.
// A sequence also finishes at a token >= end when end is positive
// (DecodeOptions.EndTimestamp), that token kept.
func beamSearch(eot, end int32, nb int, patience float64, steps int, st beamStepper) ([]int32, float32, error) {
	if patience <= 0 {
		patience = 1
	}
	maxCandidates := int(math.RoundToEven(float64(nb) * patience))
	k := nb + 1
	beams := make([][]int32, nb)
	sums := make([]float32, nb)
	var finished []finishedSeq
	finishedKeys := map[string]bool{}
	live := true // beams holds live sequences
	feed := make([]int32, nb)
	var src []int // nil: the prompt's candidates
	for i := 0; i < steps; i++ {
		toks, lps, err := st.next(beams, src, feed, k)
		if err != nil {
			return nil, 0, err
		}
		// Candidates in the reference's dict order: beam by beam, each
		// beam's top tokens by decreasing log-probability; a repeated
		// sequence (identical beams at the first step) keeps its first
		// place and takes the later score and source.
		var cands []beamCand
		index := map[string]int{}
		for b := range nb {
			for j := range k {
				tok, lp := toks[b*k+j], lps[b*k+j]
				seq := append(slices.Clip(beams[b]), tok)
				c := beamCand{key: seqKey(seq), seq: seq, score: sums[b] + lp, source: b}
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
		src = make([]int, nb)
		for b, c := range next {
			beams[b], sums[b], src[b] = c.seq, c.score, c.source
			feed[b] = c.seq[len(c.seq)-1]
		}
		if len(finished) >= maxCandidates {
			break
		}
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
