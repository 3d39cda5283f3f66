package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// Launch rules of argmax (argmax.metal) and sample (sample.metal).

func init() {
	register(plan.Argmax, launchArgmax)
	register(plan.Sample, launchSample)
}

func launchArgmax(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeArgmax(d)
	n, m := uint32(a.N), uint32(a.M)
	if m == 0 {
		return dst, nil
	}
	seg := max(32, normKnob(t.ArgmaxSegment, 4096))
	nseg := (n + seg - 1) / seg
	// two words per (row, segment) after a two-word header
	scratch := 4 * (2 + 2*uint64(m)*uint64(nseg))
	if scratch > maxScratch {
		return dst, fmt.Errorf("shaders: argmax scratch of %d bytes too large", scratch)
	}
	threads := simdThreads(min(n, seg), normKnob(t.ArgmaxThreads, 256), t)
	return append(dst,
		Launch{Function: "argmax_partial", Groups: [3]uint32{nseg, m, 1}, Threads: [3]uint32{threads, 1, 1}, Scratch: uint32(scratch)},
		Launch{Function: "argmax_reduce", Groups: [3]uint32{m, 1, 1}, Threads: [3]uint32{simdThreads(nseg, normKnob(t.ArgmaxThreads, 256), t), 1, 1}, Scratch: uint32(scratch)},
	), nil
}

// sampleMaxN bounds the vocabulary: the sampler sums masses (≤ 1 per
// token) in 64-bit fixed point with 43 fraction bits.
const sampleMaxN = 1 << 20

// SampleOneSegment as Tuning.SampleSegment makes the sampler one
// threadgroup over the whole vocabulary: no group reads what another
// wrote (for GPUs without a device-scope fence: metal's newBackend).
const SampleOneSegment = sampleMaxN

// The sampler's launch scratch (sample.metal: SMP_HDR_WORDS,
// SMP_PART_WORDS, SMP_RANGE_GAP): a header (the ticket, a spare word),
// each group's partials (spare words, its min-p count, its 256-bin
// histogram of counts and 64-bit masses), then, off their cache lines,
// each group's logit range (two words), then, from a multiple of the gap,
// each token's 64-bit mass.
const (
	sampleHdrWords  = 2
	samplePartWords = 4 + 3*256
	sampleRangeGap  = 32
)

// sampleScratch is the launch scratch's bytes for n tokens in groups
// groups.
func sampleScratch(n, groups uint32) uint32 {
	w := uint64(sampleHdrWords) + uint64(groups)*(samplePartWords+2) + sampleRangeGap
	w = (w + sampleRangeGap - 1) / sampleRangeGap * sampleRangeGap
	return uint32(4 * (w + 2*uint64(n)))
}

// launchSample: sample_scale over the vocabulary in segments of
// SampleSegment tokens (logit_bias, penalties, temperature), then sample
// over the same segments (the exp and histogram pass, most of the
// sampler's work, on many cores), whose last threadgroup to finish does
// logprobs and the walks. Its groups have SampleThreads threads, the
// walks' width; the segments have SampleSegment tokens (cuda: 1024, one
// a thread). With draws bound, the grid's y is the draws, each with its own
// launch scratch: a step's draws in one pair of launches.
func launchSample(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeSample(d)
	n := uint32(a.N)
	if n == 0 {
		return dst, fmt.Errorf("shaders: sampling from an empty vocabulary")
	}
	if n > sampleMaxN {
		return dst, fmt.Errorf("shaders: sampling vocabulary %d beyond %d", n, sampleMaxN)
	}
	draws := uint64(1)
	if a.Draws.Buf != plan.NoBuf {
		draws = uint64(a.M)
		if draws == 0 {
			return dst, nil
		}
	}
	seg := max(32, normKnob(t.SampleSegment, 2048))
	groups := (n + seg - 1) / seg
	scratch := uint64(sampleScratch(n, groups)) * draws
	if scratch > maxScratch {
		return dst, fmt.Errorf("shaders: %d draws of vocabulary %d need %d bytes of scratch", draws, n, scratch)
	}
	one := simdThreads(normKnob(t.SampleThreads, 1024), normKnob(t.SampleThreads, 1024), t)
	many := simdThreads(min(n, seg), normKnob(t.SampleSegmentThreads, 256), t)
	grid := [3]uint32{groups, uint32(draws), 1}
	return append(dst,
		Launch{Function: "sample_scale", Groups: grid, Threads: [3]uint32{many, 1, 1}, Scratch: uint32(scratch)},
		Launch{Function: "sample", Groups: grid, Threads: [3]uint32{one, 1, 1}, Scratch: uint32(scratch)},
	), nil
}
