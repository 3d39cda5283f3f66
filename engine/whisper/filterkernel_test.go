package whisper

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/plan"
)

// TestFilterKernelMatchesHost runs plan.WhisperFilter on the CPU backend
// against the host filter (logitFilter.apply, the reference), bit for bit,
// over hand-built sequences that reach every rule — the first position
// (suppress-blank, timestamp first, initial-timestamp bound), a closed
// timestamp pair, an open timestamp (with one and with several tokens
// before it), non-decreasing timestamps, no timestamp yet — with and
// without timestamps, with bias (one biased token also suppressed), and
// random logits scaled so that the "timestamps beat every text token"
// rule goes both ways. Odd trials run on 3 workers, where the CPU spreads
// each row's passes over its pool by blocks.
func TestFilterKernelMatchesHost(t *testing.T) {
	t.Parallel()
	for _, nv := range []int{51864, 51865} {
		sp, err := SpecialsFor(nv)
		require.NoError(t, err)
		tb := sp.TimestampBegin
		seqs := [][]int32{
			{},
			{tb},                                 // count 1, last a timestamp
			{tb + 3, 440},                        // text after a timestamp
			{tb + 3, 440, 11, tb + 9},            // an open timestamp: text cannot follow
			{tb + 3, 440, tb + 9, tb + 9},        // a closed pair: text must follow
			{tb, 440, 1000, tb + 30, tb + 30, 2}, // timestamps must not decrease
			{440, 1000, 2},                       // no timestamp at all
			{tb + 1499, 1},                       // the last timestamp
		}
		cases := []struct {
			name string
			opt  DecodeOptions
		}{
			{"defaults", DecodeOptions{Suppress: []int32{1, 2, 3, 220, sp.SOT}, SuppressBlank: []int32{220, sp.EOT}, MaxInitialTimestamp: 1}},
			{"bias", DecodeOptions{Suppress: []int32{7, 220}, SuppressBlank: []int32{220, sp.EOT},
				LogitBias: map[int32]float32{7: 3, 440: 2.5, 1000: -1.25, tb + 2: 4, -5: 1, int32(nv) + 3: 1}, MaxInitialTimestamp: 0.5}},
			{"no initial bound", DecodeOptions{SuppressBlank: []int32{sp.EOT}, MaxInitialTimestamp: -1}},
			{"initial bound past the end", DecodeOptions{MaxInitialTimestamp: 40}},
			{"without timestamps", DecodeOptions{WithoutTimestamps: true, Suppress: []int32{5}, SuppressBlank: []int32{220}, MaxInitialTimestamp: 1}},
		}
		r := rand.New(rand.NewPCG(uint64(nv), 18))
		for _, c := range cases {
			f := newLogitFilter(sp, &c.opt)
			table, err := f.table(nv)
			require.NoError(t, err)
			for _, seq := range seqs {
				for trial := range 6 {
					const m = 3
					// rows differ in their logits; every row has seq, the
					// last also its own variant (same count)
					logits := make([]float32, m*nv)
					tsBoost := float32(trial-3) * 2.5
					for i := range logits {
						logits[i] = float32(r.NormFloat64()) * 2
						if i%nv >= int(tb) {
							logits[i] += tsBoost
						}
					}
					hist := make([][]int32, m)
					for i := range hist {
						hist[i] = seq
					}
					if len(seq) > 0 {
						v := append([]int32(nil), seq...)
						v[len(v)-1] = tb + int32(r.IntN(1500))
						hist[m-1] = v
					}
					got := runFilterKernel(t, sp, f, nv, table, logits, hist, 1+2*(trial%2))
					for row := range m {
						want := append([]float32(nil), logits[row*nv:(row+1)*nv]...)
						f.apply(want, hist[row])
						require.Equal(t, math32bits(want), math32bits(got[row*nv:(row+1)*nv]),
							"%d %s seq %v trial %d row %d", nv, c.name, hist[row], trial, row)
						require.Equal(t, argmax(want), argmax(got[row*nv:(row+1)*nv]))
					}
				}
			}
		}
	}
}

func math32bits(s []float32) []uint32 {
	b := make([]uint32, len(s))
	for i, v := range s {
		b[i] = math.Float32bits(v)
	}
	return b
}

// runFilterKernel runs one WhisperFilter dispatch of f over the rows of
// logits, whose sampled tokens are hist (all of one length), on the CPU
// backend with the given threads.
func runFilterKernel(t *testing.T, sp Specials, f *logitFilter, nv int, table, logits []float32, hist [][]int32, threads int) []float32 {
	t.Helper()
	m, count := len(hist), len(hist[0])
	ldh := count + 2
	p := &plan.Plan{Name: "filter"}
	lb := p.AddBuffer(plan.Buffer{Name: "logits", Kind: plan.IO, Size: int64(len(logits)) * 4})
	tbuf := p.AddBuffer(plan.Buffer{Name: "table", Kind: plan.IO, Size: int64(len(table)) * 4})
	hb := p.AddBuffer(plan.Buffer{Name: "hist", Kind: plan.IO, Size: int64(m*ldh) * 4})
	ps, _ := p.AddPass("filter")
	ps.Add(filterDispatch(sp, f.timestamps, nv, m, plan.F32At(lb, 0), plan.F32At(tbuf, 0), plan.F32At(hb, 0), ldh))
	x, err := cpu.New(cpu.Options{Threads: threads}).Load(p)
	require.NoError(t, err)
	defer x.Close()
	require.NoError(t, plan.WriteF32(x, lb, 0, logits))
	require.NoError(t, plan.WriteF32(x, tbuf, 0, table))
	flat := make([]int32, m*ldh)
	for i, h := range hist {
		copy(flat[i*ldh:], h)
	}
	require.NoError(t, plan.WriteI32(x, hb, 0, flat))
	var v plan.Vars
	f.setFilterVars(&v, nv, count)
	require.NoError(t, x.Run(0, &v))
	out := make([]float32, len(logits))
	require.NoError(t, plan.ReadF32(x, lb, 0, out))
	return out
}
