package metal

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// Where the OS compiles MSL 3.2 (a device-scope fence) the sampler and
// Whisper's filter and track run over the family's segments and their
// last group combines; before it, each keeps to one threadgroup a row, so
// no group reads another's writes.
func TestSamplerGroupsFollowTheFence(t *testing.T) {
	for _, d := range []plan.Dispatch{
		plan.SampleArgs{Draws: plan.None, N: 151936, Step: 1}.Dispatch(), // Qwen's vocabulary
		plan.WhisperFilterArgs{N: 51864, M: 5, Ldx: 51864, Flags: plan.FlagTimestamps}.Dispatch(),
		plan.WhisperTrackArgs{N: 51864, Cap: 448}.Dispatch(),
	} {
		for _, fence := range []bool{true, false} {
			dev := newFakeDevice()
			dev.in.DeviceFence = fence
			b := newBackend(dev)
			lns, err := shaders.LaunchFor(&d, &b.tuning, nil)
			require.NoError(t, err)
			require.NotEmpty(t, lns)
			for _, l := range lns {
				if fence {
					require.Greater(t, l.Groups[0], uint32(1), "%s over many groups", l.Function)
				} else {
					require.Equal(t, uint32(1), l.Groups[0], "%s in one group", l.Function)
				}
			}
		}
	}
}
