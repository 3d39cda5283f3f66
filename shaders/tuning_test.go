package shaders

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every knob of every family resolves to a usable value (withDefaults
// covers every field), and the lookup falls back to Default.
func TestFamilies(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range append([]Tuning{Default}, Families...) {
		require.False(t, seen[f.Family], "family %s twice", f.Family)
		seen[f.Family] = true
		r := TuningFor(f.Family)
		if f.Family == "default" {
			r = f.withDefaults()
		}
		v := reflect.ValueOf(r)
		for i := range v.NumField() {
			switch v.Type().Field(i).Name {
			case "Cores":
				continue // the device's, set by the backend (zero: unknown)
			case "MatMulMMA", "MatMulBig", "MatMulBigHalf", "MatMulWGMMA", "MatMulMMQ", "AttnMMA", "MatVecRowsNative", "MatVecRowsNativeBatch", "MatVecRowsMMA", "MatVecRowsMMAMax": // zero is off: only the CUDA host sets them
				require.True(t, v.Field(i).IsZero(), f.Family)
				continue
			}
			require.False(t, v.Field(i).IsZero(), "%s: %s is zero", f.Family, v.Type().Field(i).Name)
		}
		require.LessOrEqual(t, r.MatVecSIMDGroups*r.SIMDWidth, r.MaxThreads, f.Family)
		require.LessOrEqual(t, r.MatVecRows, uint32(4), "%s: mat_vec holds at most 4 rows per SIMD-group", f.Family)
		require.LessOrEqual(t, r.MatVecRowsWide, uint32(4), f.Family)
		if f.MatVecRowsWide == 0 {
			require.Equal(t, r.MatVecRows, r.MatVecRowsWide, "%s: one row count for every width", f.Family)
		}
		require.Zero(t, r.EmbedThreads%r.SIMDWidth, f.Family)
	}
	require.Equal(t, Default, TuningFor("apple99"))
	require.Equal(t, uint32(128), TuningFor("apple9").ChainLength)

	// A table entry that leaves a knob out gets the default's.
	partial := Tuning{Family: "x", MatVecRows: 2}.withDefaults()
	require.Equal(t, uint32(2), partial.MatVecRows)
	require.Equal(t, Default.ChainLength, partial.ChainLength)
}

func TestOverride(t *testing.T) {
	c := TuningFor("cuda")
	require.Equal(t, uint32(2), c.MatVecRows)
	require.Equal(t, uint32(4), c.MatVecSIMDGroups)
	require.Equal(t, uint32(32), c.AttnChunk)
	require.Equal(t, Default.NormThreads, c.NormThreads)

	o, err := Override(c, "MatVecRows=1, AttnChunk=64")
	require.NoError(t, err)
	require.Equal(t, uint32(1), o.MatVecRows)
	require.Equal(t, uint32(64), o.AttnChunk)
	require.Equal(t, c.MatVecSIMDGroups, o.MatVecSIMDGroups)
	require.Equal(t, "cuda+MatVecRows=1, AttnChunk=64", o.Family)
	same, err := Override(c, "")
	require.NoError(t, err)
	require.Equal(t, c, same)
	for _, bad := range []string{"MatVecRows", "Nope=1", "Family=1", "MatVecRows=0", "MatVecRows=-1", "MatVecRows=x"} {
		_, err := Override(c, bad)
		require.Error(t, err, bad)
	}
}
