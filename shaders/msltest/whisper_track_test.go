package msltest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestWhisperTrackKernel runs whisper_track against the CPU backend: a
// window started (the no-speech log-probability, the state reset), then
// chosen sequences stepped one token a replay that end by each stop rule
// (end of text, a repetition loop of text and of timestamps, the end
// timestamp, the token limit), with steps after the stop that must change
// nothing; logits with −Inf entries (filtered) on a real vocabulary and
// a small one. Statuses, counts and tokens compare exactly, the
// log-probabilities within float32 summation (the CPU sums in float64).
func TestWhisperTrackKernel(t *testing.T) {
	checkWhisperTrack(t, true)
}

// checkWhisperTrack is TestWhisperTrackKernel's check, on the small
// vocabulary alone unless real (the other tunings' segments split it).
func checkWhisperTrack(t *testing.T, real bool) {
	type vocab struct{ n, tb, eot, noSpeech int }
	vocabs := []vocab{{300, 200, 150, 199}, {51864, 50363, 50256, 50361}}
	if !real {
		vocabs = vocabs[:1]
	}
	for _, v := range vocabs {
		tb, eot := int32(v.tb), int32(v.eot)
		loop := []int32{40, 41, 42}
		var rep []int32
		for range 9 {
			rep = append(rep, loop...)
		}
		var tsRep []int32
		for i := range 7 {
			tsRep = append(tsRep, tb+int32(2*i), 7, 8, tb+int32(2*i+1))
		}
		cases := []struct {
			name          string
			seq           []int32
			limit, endTs  int
			status, steps int
		}{
			{"eot", []int32{tb, 40, 41, tb + 5, eot, 9, 9}, 100, 0, plan.TrackEOT, 5},
			{"repeat", append(rep, 1, 2), 100, 0, plan.TrackRepeated, 24},
			{"timestamp loop", append(tsRep, 3), 100, 0, plan.TrackRepeated, 24},
			{"end timestamp", []int32{tb, 40, tb + 20, tb + 30, 5}, 100, int(tb) + 30, plan.TrackEndTimestamp, 4},
			{"limit", []int32{tb, 40, 41, 42, 43, 44}, 4, 0, plan.TrackLimitReached, 4},
			{"running", []int32{tb, 40, 41}, 100, 0, plan.TrackRunning, 3},
		}
		for ci, c := range cases {
			const capTok = 64
			k := len(c.seq)
			step := plan.WhisperTrackArgs{X: plan.Binding{Buf: 0}, Choice: plan.Binding{Buf: 1}, Track: plan.Binding{Buf: 2}, Next: plan.Binding{Buf: 3},
				N: v.n, Cap: capTok, EOT: v.eot, TsBegin: v.tb, Token: v.noSpeech, RepUnit: 24, RepMin: 4, RepSpan: 24}
			d := step.Dispatch()
			d.AddPatch(plan.PatchWhisperTrackCount, plan.VarUser0, 1, 0)
			d.AddPatch(plan.PatchWhisperTrackXOff, plan.VarUser0, int64(4*v.n), 0)
			d.AddPatch(plan.PatchWhisperTrackChoiceOff, plan.VarUser0, 4, 0)
			logits := plan.Buffer{Name: "logits", Kind: plan.IO, Size: int64(4 * k * v.n)}
			choice := plan.Buffer{Name: "choice", Kind: plan.IO, Size: int64(4 * k)}
			track := plan.Buffer{Name: "track", Kind: plan.IO, Size: int64(4 * (plan.TrackHeader + 2*capTok))}
			next := plan.Buffer{Name: "next", Kind: plan.IO, Size: 4}
			var steps []plan.Vars
			for i := range k {
				steps = append(steps, plan.Vars{plan.VarUser0: int64(i)})
			}
			fill := func(id plan.BufID, b []byte) {
				r := rand.New(rand.NewPCG(uint64(ci), uint64(v.n)))
				put := func(i int, u uint32) { binary.LittleEndian.PutUint32(b[4*i:], u) }
				switch id {
				case 0:
					for i := range len(b) / 4 {
						f := float32(r.NormFloat64()) * 3
						if r.IntN(5) == 0 {
							f = float32(math.Inf(-1))
						}
						put(i, math.Float32bits(f))
					}
					for i, tok := range c.seq { // the chosen token is never masked
						put(i*v.n+int(tok), math.Float32bits(4))
					}
				case 1:
					for i, tok := range c.seq {
						put(i, uint32(tok))
					}
				case 2:
					clear(b)
					put(plan.TrackLimit, uint32(c.limit))
					put(plan.TrackEndTs, uint32(c.endTs))
				case 3:
					put(0, 12345)
				}
			}
			t.Run(c.name, func(t *testing.T) {
				header := int64(4 * (plan.TrackHeader + capTok))
				tc := Case{Plan: SingleOp(d, logits, choice, track, next), Steps: steps, Fill: fill, Tol: 2e-5,
					Outputs: []Output{{Buf: 2, Type: ggml.I32, Len: header}, {Buf: 2, Type: ggml.F32, Off: header}, {Buf: 3, Type: ggml.I32}}}
				Compare(t, tc)
				// and the rule that stopped it is the one this case reaches
				ref, _ := RunBoth(t, tc)
				if st := ref[0]; int(st[plan.TrackStatus]) != c.status || int(st[plan.TrackSteps]) != c.steps {
					t.Fatalf("status %v after %v steps, want %d after %d", st[plan.TrackStatus], st[plan.TrackSteps], c.status, c.steps)
				}
			})
		}
		// The window's start: the state reset and the no-speech
		// log-probability of raw logits.
		start := plan.WhisperTrackArgs{X: plan.Binding{Buf: 0}, Choice: plan.None, Track: plan.Binding{Buf: 1}, Next: plan.None,
			N: v.n, Cap: 8, EOT: v.eot, TsBegin: v.tb, Token: v.noSpeech, Flags: plan.FlagTrackStart}.Dispatch()
		start.AddPatch(plan.PatchWhisperTrackLimit, plan.VarUser0, 1, 0)
		start.AddPatch(plan.PatchWhisperTrackEndTs, plan.VarUser1, 1, 0)
		p := SingleOp(start, plan.Buffer{Name: "logits", Kind: plan.IO, Size: int64(4 * v.n)},
			plan.Buffer{Name: "track", Kind: plan.IO, Size: int64(4 * (plan.TrackHeader + 16))})
		Compare(t, Case{Plan: p, Steps: []plan.Vars{{plan.VarUser0: 77, plan.VarUser1: int64(tb) + 9}}, Seed: 5, Tol: 2e-5,
			Outputs: []Output{{Buf: 1, Type: ggml.I32, Len: 12}, {Buf: 1, Type: ggml.F32, Off: 12, Len: 4}, {Buf: 1, Type: ggml.I32, Off: 16}}})
	}
}
