package runtime

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/cpu"
)

// The advice's machine description: the CPU backend's threads and SIMD,
// no GPU when the choice is the CPU, else the one auto would take.
func TestThisMachine(t *testing.T) {
	m := ThisMachine(backends.CPU)
	require.Equal(t, cpu.DefaultThreads(), m.Cores)
	require.Equal(t, cpu.SIMD(), m.SIMD)
	require.Empty(t, m.GPU)
	require.Equal(t, backends.GPU(), ThisMachine(backends.Auto).GPU)
}
