package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/backends/backendstest"
)

// About names the backends this machine would use, from the driver list:
// with a CUDA GPU (a stand-in driver here) cuda before the CPU.
func TestAboutNamesTheBackendsHere(t *testing.T) {
	require.Equal(t, backends.Here(), (&About{}).Info().Backends)
	backendstest.FakeGPU(t, backends.CUDA)
	require.Equal(t, []string{"cuda", "cpu"}, (&About{}).Info().Backends)
}
