package plan

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// StepRunner checks the pass before running anything, holds the lock
// through the steps, and names a failing step of a sequence.
func TestStepRunner(t *testing.T) {
	var mu sync.Mutex
	var ran []int64
	r := NewStepRunner(&mu,
		func(pass int) error {
			if pass != 0 {
				return errors.New("no such pass")
			}
			return nil
		},
		func(pass int, v *Vars) error {
			require.False(t, mu.TryLock(), "steps run under the lock")
			ran = append(ran, v[0])
			if v[0] < 0 {
				return errors.New("bad step")
			}
			return nil
		})
	require.NoError(t, r.Run(0, &Vars{7}))
	require.EqualError(t, r.Run(1, &Vars{8}), "no such pass")
	require.EqualError(t, r.RunSeq(1, []Vars{{9}}), "no such pass")
	require.EqualError(t, r.RunSeq(0, []Vars{{1}, {2}, {-1}, {4}}), "step 2: bad step")
	require.Equal(t, []int64{7, 1, 2, -1}, ran)
	require.True(t, mu.TryLock(), "the lock is released")
	mu.Unlock()
	require.NoError(t, r.Run(0, nil))
	require.Equal(t, int64(0), ran[len(ran)-1], "nil vars are all zero")

	// the caller's Vars stay on its stack
	var sum int64
	quiet := NewStepRunner(&mu, func(int) error { return nil }, func(_ int, v *Vars) error { sum += v[0]; return nil })
	require.Zero(t, testing.AllocsPerRun(10, func() {
		v := Vars{3}
		_ = quiet.Run(0, &v)
	}))
	require.Equal(t, int64(33), sum)
}
