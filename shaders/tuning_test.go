package shaders

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every family's knobs are set (a zero would silently mean "default"), and
// the lookup falls back to Default.
func TestFamilies(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range append([]Tuning{Default}, Families...) {
		require.False(t, seen[f.Family], "family %s twice", f.Family)
		seen[f.Family] = true
		v := reflect.ValueOf(f)
		for i := range v.NumField() {
			require.False(t, v.Field(i).IsZero(), "%s: %s is zero", f.Family, v.Type().Field(i).Name)
		}
		require.Zero(t, f.MatVecThreads%f.SIMDWidth, "%s: matrix-vector threadgroups are whole SIMD-groups", f.Family)
		require.LessOrEqual(t, f.MatVecThreads, f.MaxThreads)
		require.Equal(t, f, TuningFor(f.Family))
	}
	require.Equal(t, Default, TuningFor("apple99"))
	require.Equal(t, uint32(128), TuningFor("apple9").ChainLength)

	// A table entry that leaves a knob out gets the default's.
	partial := Tuning{Family: "x", RowsPerSIMD: 2}.withDefaults()
	require.Equal(t, uint32(2), partial.RowsPerSIMD)
	require.Equal(t, Default.ChainLength, partial.ChainLength)
}
