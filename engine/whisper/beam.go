package whisper

import (
	"fmt"
	"math"

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

type finishedSeq struct {
	tokens []int32 // without EOT
	score  float32
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
	// The reference stops once the sequence (prompt included) is longer
	// than the context.
	steps := min(sampleLen, m.H.NTextCtx-len(init)+1)
	var toks []int32
	var sum float32
	var err error
	if !m.hostSelect && finishedCap(nb, opt.Patience) <= m.lay.beamFin {
		// the prompt too runs in the device search's chain
		toks, sum, res.NoSpeechProb, err = m.deviceBeams(filter, init, sotIndex, nb, beamSettings(opt.EndTimestamp, nb, opt.Patience, steps), opt)
	} else {
		toks, sum, err = m.hostSearch(sp, init, sotIndex, nb, steps, filter, opt, res)
	}
	if err != nil {
		return nil, err
	}
	res.Tokens = toks
	res.SumLogprob = float64(sum)
	res.AvgLogprob = res.SumLogprob / float64(len(res.Tokens)+1)
	return res, nil
}

// hostSearch runs a window's beam search with the host ranking the
// candidates (hostBeams) from the prompt's logits (res gets the no-speech
// probability).
func (m *Model) hostSearch(sp Specials, init []int32, sotIndex, nb, steps int, filter *logitFilter, opt DecodeOptions, res *DecodeResult) ([]int32, float32, error) {
	logits, pos, err := m.promptWindow(sp, init, sotIndex, res)
	if err != nil {
		return nil, 0, err
	}
	// Every beam starts as the prompt: one prompt pass, copied to the others.
	if err := m.broadcastKV(m.lay.beams, pos); err != nil {
		return nil, 0, err
	}
	h := &hostBeams{rows: &modelBeams{m: m, base: pos, pos: pos, nb: nb, feed: make([]int32, m.lay.beams)}, f: filter, first: logits, nv: m.H.NVocab}
	return h.search(sp.EOT, opt.EndTimestamp, nb, opt.Patience, steps)
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

// hostBeams runs a search with each beam's logits row read by the host:
// the reference of the backend's PassBeamTop (the same filters,
// plan.Logprobs as the CPU's Sample kernel computes it, plan.BeamsStep as
// its WhisperBeams ranks), and the search for a patience whose finished
// sequences the backend's state has no room for.
type hostBeams struct {
	rows  rowStepper
	f     *logitFilter
	first []float32 // the prompt's logits
	nv    int
}

// search runs at most steps search steps of nb beams and returns the
// chosen sampled tokens, without EOT, and their summed log-probability.
// A sequence also finishes at a token >= end when end is positive
// (DecodeOptions.EndTimestamp), that token kept. Each step's candidates
// are ranked by plan.BeamsStep, the backend's WhisperBeams.
func (h *hostBeams) search(eot, end int32, nb int, patience float64, steps int) ([]int32, float32, error) {
	const w = plan.SampleLogprobWords
	nv, fin := h.nv, finishedCap(nb, patience)
	io := plan.BeamsIO{Top: make([]float32, nb*w), Ldt: w, Hist: make([]int32, nb*steps), CapTok: steps,
		St: make([]int32, plan.BeamsStateWords(nb, fin, steps)), Src: make([]int32, nb), Next: make([]int32, nb), Fin: fin, EOT: eot}
	copy(io.St, beamSettings(end, nb, patience, steps))
	src := make([]int, nb)
	for c := 0; io.St[plan.BeamsStatus] == plan.BeamsRunning; c++ {
		var rows []float32
		if c == 0 {
			rows, io.Ldt = append([]float32(nil), h.first...), 0 // the prompt's candidates are every beam's
		} else {
			for d := range src {
				src[d] = int(io.Src[d])
			}
			if err := h.rows.reorder(src); err != nil {
				return nil, 0, err
			}
			out, err := h.rows.step(io.Next)
			if err != nil {
				return nil, 0, err
			}
			rows, io.Ldt = out, w
		}
		for b := range len(rows) / nv {
			h.f.apply(rows[b*nv:(b+1)*nv], io.Hist[b*steps:b*steps+c])
			plan.Logprobs(io.Top[b*w:(b+1)*w], rows[b*nv:(b+1)*nv], 0, nb+1)
		}
		plan.BeamsStep(&io)
	}
	return bestFinished(io.St, nb, fin, steps)
}

// finishedCap is the finished sequences a search keeps: enough to end it
// (round(nb × patience), the reference's max_candidates), and nb, which
// its stop fills from the live beams.
func finishedCap(nb int, patience float64) int {
	return max(maxCandidates(nb, patience), nb)
}

func maxCandidates(nb int, patience float64) int {
	if patience <= 0 {
		patience = 1
	}
	return int(math.RoundToEven(float64(nb) * patience))
}

// beamSettings is a search's initial plan.WhisperBeams state: its header
// and the beams' sums, 0.
func beamSettings(end int32, nb int, patience float64, steps int) []int32 {
	st := make([]int32, plan.BeamsHeader+nb)
	st[plan.BeamsN], st[plan.BeamsLimit] = int32(nb), int32(steps)
	st[plan.BeamsMaxCand], st[plan.BeamsEndTs] = int32(maxCandidates(nb, patience)), max(end, 0)
	return st
}

// bestFinished picks the search's result from its final state (rows beams,
// fin entries of at most capTok tokens) by rankSequences.
func bestFinished(st []int32, rows, fin, capTok int) ([]int32, float32, error) {
	n := int(st[plan.BeamsFinished])
	if st[plan.BeamsStatus] == plan.BeamsRunning || n < 1 || n > fin {
		return nil, 0, fmt.Errorf("whisper: the beam search stopped with %d finished sequences (status %d)", n, st[plan.BeamsStatus])
	}
	seqs := make([]finishedSeq, n)
	for e := range seqs {
		toks, sum, ok := plan.BeamsFinishedSeq(st, rows, capTok, e)
		if !ok {
			return nil, 0, fmt.Errorf("whisper: finished sequence %d of the beam search is malformed", e)
		}
		seqs[e] = finishedSeq{tokens: toks, score: sum}
	}
	best := rankSequences(seqs)
	return append([]int32(nil), seqs[best].tokens...), seqs[best].score, nil
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
