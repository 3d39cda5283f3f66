package metal

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Where the OS compiles MSL 3.2 (a device-scope fence) the sampler runs
// over the family's segments and its last group draws; before it, the
// sampler keeps to one threadgroup, so no group reads another's writes.
func TestSamplerGroupsFollowTheFence(t *testing.T) {
	d := plan.SampleArgs{N: 151936, Step: 1}.Dispatch() // Qwen's vocabulary
	for _, fence := range []bool{true, false} {
		dev := newFakeDevice()
		dev.in.DeviceFence = fence
		b := newBackend(dev)
		lns, err := shaders.LaunchFor(&d, &b.tuning, nil)
		require.NoError(t, err)
		require.Len(t, lns, 2)
		for _, l := range lns {
			if fence {
				require.Greater(t, l.Groups[0], uint32(1), "%s over many groups", l.Function)
			} else {
				require.Equal(t, uint32(1), l.Groups[0], "%s in one group", l.Function)
			}
		}
	}
}
