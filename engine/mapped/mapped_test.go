package mapped

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBounds(t *testing.T) {
	m := make([]byte, 4096)
	other := make([]byte, 64)
	_, _, ok := Bounds(m[10:20])
	require.False(t, ok, "not registered yet")
	Register(m)
	defer Unregister(m)
	lo, hi, ok := Bounds(m[10:20])
	require.True(t, ok)
	require.Equal(t, addr(m), lo)
	require.Equal(t, addr(m)+4096, hi)
	_, _, ok = Bounds(m[4000:4096])
	require.True(t, ok, "the map's last bytes")
	_, _, ok = Bounds(other)
	require.False(t, ok, "Go memory outside every map")
	_, _, ok = Bounds(m[:0])
	require.False(t, ok, "no bytes")
	Unregister(m)
	_, _, ok = Bounds(m[10:20])
	require.False(t, ok, "unregistered")
}
