package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Present says yes only for a GPU the kernels run on, and opens nothing:
// no context, no module.
func TestPresent(t *testing.T) {
	f := withFake(t, 90)
	require.True(t, Present())
	require.NotContains(t, f.calls, "cuDevicePrimaryCtxRetain")
	require.NotContains(t, f.calls, "cuModuleLoadDataEx")
	f.compute = 61
	require.False(t, Present(), "too old for the kernels")
	f.compute, f.count = 90, 0
	require.False(t, Present(), "no GPU")
}
