package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// The sampler's passes over the vocabulary run in one threadgroup per
// SampleSegment tokens (SmolLM2's 49,152: 24 groups), the walks in the
// last of sample's to finish.
func TestSampleLaunchGeometry(t *testing.T) {
	d := plan.SampleArgs{Draws: plan.None, N: 49152, Step: 3}.Dispatch()
	lns, err := LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	// the header, parts and ranges (18,610 words) rounded up to 32 words,
	// then two words a token
	scratch := uint32(4 * (18624 + 2*49152))
	require.Equal(t, []Launch{
		{Function: "sample_scale", Groups: [3]uint32{24, 1, 1}, Threads: [3]uint32{256, 1, 1}, Scratch: scratch},
		{Function: "sample", Groups: [3]uint32{24, 1, 1}, Threads: [3]uint32{1024, 1, 1}, Scratch: scratch},
	}, lns)

	// a vocabulary smaller than a segment: one group of as few threads as
	// cover it
	d = plan.SampleArgs{Draws: plan.None, N: 7}.Dispatch()
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Len(t, lns, 2)
	require.Equal(t, [3]uint32{1, 1, 1}, lns[0].Groups)
	require.Equal(t, [3]uint32{32, 1, 1}, lns[0].Threads)
	require.Equal(t, [3]uint32{1, 1, 1}, lns[1].Groups)

	for _, n := range []int{0, sampleMaxN + 1} {
		d = plan.SampleArgs{Draws: plan.None, N: n}.Dispatch()
		_, err = LaunchFor(&d, &Default, nil)
		require.Error(t, err, "n=%d", n)
	}
}
