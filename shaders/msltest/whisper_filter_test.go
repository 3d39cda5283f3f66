package msltest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestWhisperFilterKernel runs whisper_filter against the CPU backend, bit
// for bit: sequences that reach every rule (the first position with and
// without an initial-timestamp bound, a closed pair, an open timestamp,
// non-decreasing timestamps, no timestamp yet, the last timestamp, a
// history longer than a narrow threadgroup), a table with biases, suppressed and suppress-blank tokens, the rules on
// and off, and logits scaled so that "timestamps beat every text token"
// goes both ways; a real vocabulary (51865) and a small one whose rows
// are shorter than a threadgroup.
func TestWhisperFilterKernel(t *testing.T) {
	checkWhisperFilter(t, true)
}

// checkWhisperFilter is TestWhisperFilterKernel's check, on the small
// vocabulary alone unless real (the other tunings' segments split it).
func checkWhisperFilter(t *testing.T, real bool) {
	type vocab struct{ n, tb, eot, noTs int }
	vocabs := []vocab{{300, 200, 150, 199}, {51865, 50364, 50257, 50363}}
	if !real {
		vocabs = vocabs[:1]
	}
	for _, v := range vocabs {
		tb := int32(v.tb)
		seqs := [][]int32{
			{},
			{tb},
			{tb + 3, 40},
			{tb + 3, 40, 11, tb + 9},
			{tb + 3, 40, tb + 9, tb + 9},
			{tb, 40, 100, tb + 30, tb + 30, 2},
			{40, 100, 2},
			{int32(v.n - 1), 1},
			longHistory(tb), // more tokens than a narrow threadgroup's threads
		}
		for si, seq := range seqs {
			for _, flags := range []uint32{plan.FlagTimestamps, 0} {
				for trial, maxInit := range []int{50, v.n, 0} {
					const m = 3
					count := len(seq)
					ldh := count + 1
					d := plan.WhisperFilterArgs{X: plan.Binding{Buf: 0}, Table: plan.Binding{Buf: 1}, Hist: plan.Binding{Buf: 2},
						N: v.n, M: m, Ldx: v.n + 5, Ldh: ldh, TsBegin: v.tb, EOT: v.eot, NoTs: v.noTs, Flags: flags}.Dispatch()
					d.AddPatch(plan.PatchWhisperFilterCount, plan.VarUser0, 1, 0)
					d.AddPatch(plan.PatchWhisperFilterMaxInitial, plan.VarUser1, 1, 0)
					logits := plan.Buffer{Name: "logits", Kind: plan.IO, Size: int64(4 * (m*(v.n+5) - 5))}
					table := plan.Buffer{Name: "table", Kind: plan.IO, Size: int64(8 * v.n)}
					hist := plan.Buffer{Name: "hist", Kind: plan.IO, Size: int64(4 * max(1, m*ldh))}
					r := rand.New(rand.NewPCG(uint64(si), uint64(trial)))
					tsBoost := float32(trial-1) * 3
					Compare(t, Case{Plan: SingleOp(d, logits, table, hist),
						Steps:   []plan.Vars{{plan.VarUser0: int64(count), plan.VarUser1: int64(maxInit)}},
						Outputs: []Output{{Buf: 0, Type: ggml.I32}}, // every bit
						Fill: func(id plan.BufID, b []byte) {
							put := func(i int, f float32) { binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f)) }
							switch id {
							case 0:
								for i := range len(b) / 4 {
									f := float32(r.NormFloat64()) * 2
									if i%(v.n+5) >= v.tb {
										f += tsBoost
									}
									put(i, f)
								}
							case 1:
								for _, j := range []int{1, 2, 7, v.n - 2} {
									put(j, float32(math.Inf(-1)))
								}
								put(40, 2.5)
								put(100, -1.25)
								put(v.tb+2, 4)
								for _, j := range []int{3, v.eot} {
									put(v.n+j, float32(math.Inf(-1)))
								}
							case 2:
								for row := range m {
									for i, tok := range seq {
										if row == m-1 && i == count-1 {
											tok = tb + int32(r.IntN(v.n-v.tb))
										}
										binary.LittleEndian.PutUint32(b[4*(row*ldh+i):], uint32(tok))
									}
								}
							}
						}})
				}
			}
		}
	}
}

// longHistory is 41 tokens, timestamps at 0, 2 and 37: past a 32-thread
// threadgroup's first stride.
func longHistory(tb int32) []int32 {
	h := []int32{tb, 40, tb + 3}
	for i := range 34 {
		h = append(h, int32(10+i))
	}
	return append(h, tb+9, 5, 6, 7)
}
