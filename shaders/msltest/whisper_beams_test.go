package msltest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestWhisperBeamsKernel runs whisper_beams against the CPU backend
// (plan.BeamsStep, the host beam search's ranking): searches of a few
// beams stepped over candidates drawn from a small vocabulary, so that
// beams repeat each other's sequences, candidates merge and scores tie
// (log-probabilities from a few values, −Inf and NaN among them), with
// EOT and end timestamps finishing sequences, every rule stopping some
// search (enough finished, every candidate ended, the token limit, a
// stop filling the finished set from the live beams) and steps after the
// stop that must change nothing. The state, the beams' tokens, sources
// and next tokens compare exactly.
func TestWhisperBeamsKernel(t *testing.T) {
	const (
		rows, capTok, fin, eot, tsBegin = 6, 24, 12, 20, 30
		w                               = plan.SampleLogprobWords
	)
	type search struct {
		nb, limit, maxCand, end, steps int
		first                          bool // step 0's candidates from one row (ldt 0)
		endAt                          int  // from this step on (when > 0) every candidate finishes
	}
	cases := []search{
		{nb: 5, limit: 20, maxCand: 5, steps: 24},
		{nb: 5, limit: 20, maxCand: 10, end: 33, steps: 24},
		{nb: 3, limit: 6, maxCand: 3, steps: 10},
		{nb: 2, limit: 6, maxCand: 1, steps: 8},
		{nb: 5, limit: 4, maxCand: 12, end: 31, steps: 9},
		{nb: 6, limit: 20, maxCand: 6, end: 30, steps: 12},
		{nb: 4, limit: 5, maxCand: 4, steps: 6, first: true},
		{nb: 5, limit: 20, maxCand: 12, end: 30, steps: 6, endAt: 2},
	}
	seen := map[int32]bool{}
	for seed := range 6 {
		for ci, c := range cases {
			r := rand.New(rand.NewPCG(uint64(seed), uint64(ci)))
			k := c.nb + 1
			lps := []float32{-0.25, -0.5, -0.5, -1, -2, -3.5, float32(math.Inf(-1))}
			if seed%3 == 2 {
				lps = append(lps, float32(math.NaN()))
			}
			// each step's records: k distinct tokens a beam from a small set
			top := make([]float32, c.steps*rows*w)
			for s := range c.steps {
				for b := range rows {
					rec := top[(s*rows+b)*w:]
					rec[0] = float32(r.NormFloat64())
					used := map[int32]bool{}
					for j := range k {
						var tok int32
						for {
							switch x := r.IntN(20); {
							case c.endAt > 0 && s >= c.endAt && x < 3:
								tok = eot
							case c.endAt > 0 && s >= c.endAt:
								tok = tsBegin + int32(r.IntN(6))
							case x < 2 && seed%2 == 0:
								tok = eot
							case x < 4:
								tok = tsBegin + int32(r.IntN(6))
							default:
								tok = 1 + int32(r.IntN(6))
							}
							if !used[tok] {
								break
							}
						}
						used[tok] = true
						rec[1+2*j] = math.Float32frombits(uint32(tok))
						rec[2+2*j] = lps[r.IntN(len(lps))]
					}
				}
			}
			ldt := w
			if c.first {
				ldt = 0
			}
			d := plan.WhisperBeamsArgs{Top: plan.Binding{Buf: 0}, Hist: plan.Binding{Buf: 1}, State: plan.Binding{Buf: 2},
				Src: plan.Binding{Buf: 3}, Next: plan.Binding{Buf: 4}, Beams: rows, Cap: capTok, Fin: fin, Ldt: ldt, EOT: eot}.Dispatch()
			d.AddPatch(plan.PatchWhisperBeamsTopOff, plan.VarUser0, int64(4*rows*w), 0)
			words := plan.BeamsStateWords(rows, fin, capTok)
			bufs := []plan.Buffer{
				{Name: "top", Kind: plan.IO, Size: int64(4 * len(top))},
				{Name: "hist", Kind: plan.IO, Size: int64(4 * rows * capTok)},
				{Name: "state", Kind: plan.IO, Size: int64(4 * words)},
				{Name: "src", Kind: plan.IO, Size: 4 * rows},
				{Name: "next", Kind: plan.IO, Size: 4 * rows},
			}
			var steps []plan.Vars
			for s := range c.steps {
				steps = append(steps, plan.Vars{plan.VarUser0: int64(s)})
			}
			fill := func(id plan.BufID, b []byte) {
				put := func(i int, u uint32) { binary.LittleEndian.PutUint32(b[4*i:], u) }
				for i := range len(b) / 4 {
					put(i, 0x7fc00000+uint32(i)) // garbage the kernel must not read
				}
				switch id {
				case 0:
					for i, v := range top {
						put(i, math.Float32bits(v))
					}
				case 2:
					for i := range plan.BeamsHeader + rows {
						put(i, 0)
					}
					put(plan.BeamsN, uint32(c.nb))
					put(plan.BeamsLimit, uint32(c.limit))
					put(plan.BeamsMaxCand, uint32(c.maxCand))
					put(plan.BeamsEndTs, uint32(c.end))
				}
			}
			t.Run(fmt.Sprintf("seed%d/case%d", seed, ci), func(t *testing.T) {
				tc := Case{Plan: SingleOp(d, bufs...), Steps: steps, Fill: fill,
					Outputs: []Output{{Buf: 1, Type: ggml.I32}, {Buf: 2, Type: ggml.I32}, {Buf: 3, Type: ggml.I32}, {Buf: 4, Type: ggml.I32}}}
				ref, _ := RunBoth(t, tc)
				Compare(t, tc)
				st := ref[1]
				seen[int32(st[plan.BeamsStatus])] = true
				if st[plan.BeamsStatus] == plan.BeamsRunning {
					t.Fatalf("the search still runs after %d steps (limit %d)", c.steps, c.limit)
				}
				if c.end == 0 && seed%2 == 1 && st[plan.BeamsStatus] == plan.BeamsLimitReached {
					// nothing finishes on its own: the stop fills the set
					if int(st[plan.BeamsFinished]) != c.nb {
						t.Fatalf("%v finished at the token limit, want %d", st[plan.BeamsFinished], c.nb)
					}
					seen[-1] = true
				}
			})
		}
	}
	for _, s := range []int32{plan.BeamsEnough, plan.BeamsEnded, plan.BeamsLimitReached, -1} {
		if !seen[s] {
			t.Errorf("no search stopped with status %d", s)
		}
	}
}
