package plan

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckLoad(t *testing.T) {
	require.EqualError(t, CheckLoad(nil), "nil plan")
	p := &Plan{Name: "tiny"}
	require.NoError(t, CheckLoad(p))
	p.Passes = append(p.Passes, nil)
	require.EqualError(t, CheckLoad(p), "plan tiny: nil pass")
	p.Passes = nil
	p.Buffers = []Buffer{{Name: "a", Size: -1}}
	require.EqualError(t, CheckLoad(p), `plan tiny: buffer 0 ("a") has negative size -1`)
	p.Buffers = nil
	p.Passes = []*Pass{{Name: "main", Ops: []Dispatch{{Kernel: Kernel(255)}}}}
	require.ErrorContains(t, CheckLoad(p), "unknown kernel", "Validate runs")
}

func TestCheckPass(t *testing.T) {
	require.NoError(t, CheckPass("p", false, 1, 2))
	require.EqualError(t, CheckPass("p", true, 0, 2), "plan p: executable is closed")
	require.EqualError(t, CheckPass("p", false, 2, 2), "plan p: pass 2 out of range (2 passes)")
	require.EqualError(t, CheckPass("p", false, -1, 2), "plan p: pass -1 out of range (2 passes)")
}

func TestRunEach(t *testing.T) {
	var seen []int64
	steps := []Vars{{VarPos: 1}, {VarPos: 2}, {VarPos: 3}}
	err := RunEach(steps, func(v *Vars) error {
		seen = append(seen, v[VarPos])
		if v[VarPos] == 2 {
			return errors.New("boom")
		}
		return nil
	})
	require.EqualError(t, err, "step 1: boom")
	require.Equal(t, []int64{1, 2}, seen, "stops at the first failure")
	require.NoError(t, RunEach(nil, func(*Vars) error { return errors.New("never") }))
}
