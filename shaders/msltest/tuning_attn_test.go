package msltest

import (
	"fmt"
	"testing"

	"github.com/harkapp/hark/shaders"
)

// The norm, rope, attention, argmax and sample checks again under extreme
// launch geometries, as another chip family's tuning could give: one
// SIMD-group per threadgroup, tiny attention chunks with a split forced on
// every shape (prefill and probs included), or never split, many small
// argmax segments, a small sampler threadgroup and many small sampler
// segments (or one segment for the whole vocabulary), one or three
// SIMD-groups for paged attention, Whisper's filter and track over many
// small segments of a row (or one). The kernels must not
// depend on the geometry beyond what the launch rules pass them.
func TestKernelsOtherTunings(t *testing.T) {
	tunings := []shaders.Tuning{
		{Family: "narrow", SIMDWidth: 32, MaxThreads: 1024, NormThreads: 32, RopeThreads: 32, AttnRows: 1,
			AttnChunk: 32, AttnSplitBelow: 1 << 30, ArgmaxSegment: 33, ArgmaxThreads: 32, SampleThreads: 32,
			SampleSegment: 100, SampleSegmentThreads: 32, WhisperSegment: 33, WhisperThreads: 32},
		{Family: "wide", SIMDWidth: 32, MaxThreads: 1024, NormThreads: 1024, RopeThreads: 1024, AttnRows: 8,
			AttnChunk: 96, AttnSplitBelow: 1, AttnPagedSIMDGroups: 3, AttnPagedValues: shaders.PagedValuesBatched, ArgmaxSegment: 100000, ArgmaxThreads: 1024, SampleThreads: 256,
			SampleSegment: 1 << 20, SampleSegmentThreads: 1024, WhisperSegment: shaders.WhisperOneSegment, WhisperThreads: 1024},
		shaders.TuningFor("cuda"), // what NVIDIA GPUs run (decode's splits of f16 caches up to 1024 keys in one threadgroup)
		// and on a 3-multiprocessor GPU with the split capped at 3 chunks
		// (AttnSplitGroups, AttnMaxChunks): 12 chunks of 64 for 700 keys
		// from the core count, then 3 of 256; 3 of 128 for the beams' 300
		// (AttnGroupKeys off: threadgroups per chunk and the merge)
		func() shaders.Tuning {
			c := shaders.TuningFor("cuda")
			c.Family, c.Cores, c.AttnMaxChunks, c.AttnGroupKeys = "cuda-3-cores", 3, 3, 1
			return c
		}(),
	}
	defer func() { kitTune = nil }()
	for i := range tunings {
		kitTune = &tunings[i]
		t.Run(fmt.Sprint(tunings[i].Family), func(t *testing.T) {
			TestNormKernels(t)
			TestRopeKernel(t)
			TestRopeKVKernel(t)
			TestAttentionKernel(t)
			TestRopeAttentionKernel(t)
			TestAttentionPagedKernel(t)
			TestPagedKernelsBadRow(t)
			TestArgmaxKernel(t)
			if !testing.Short() {
				TestSampleKernel(t)
				TestSampleUntruncated(t)
			}
			TestSampleDegenerate(t)
			checkWhisperFilter(t, false)
			checkWhisperTrack(t, false)
		})
	}
}
