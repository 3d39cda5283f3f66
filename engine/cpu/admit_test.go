package cpu

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestPassAdmissionByPriority: plans sharing a pool take it one pass at a
// time, the most urgent first. Two chat-like plans (priority 1) and a
// batch one (2) run passes back to back; a dictation-like plan (0) then
// runs its passes. Counted from the gate's trace, not timed: once the
// dictation waits, no other pass is admitted before it (it waits only
// for the pass that held the pool).
func TestPassAdmissionByPriority(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	type ev struct {
		pri     int32
		granted bool
	}
	var events []ev // under the gate's mutex
	pool.gate.trace = func(pri int32, granted bool) { events = append(events, ev{pri, granted}) }
	load := func(pri int32) *Exec {
		h, _ := decodePlan(t)
		p := new(atomic.Int32)
		p.Store(pri)
		h.be = New(Options{Pool: pool}).Prioritized(p)
		return h.load()
	}
	vars := func(i int) *plan.Vars {
		// every variable wraps: the plan's token buffers hold 32 steps, and
		// on 16 cores the other plans run hundreds of passes meanwhile
		i %= 24
		return &plan.Vars{plan.VarPos: int64(i), plan.VarKVLen: int64(i + 1), plan.VarSlot: int64(i), plan.VarStep: int64(i)}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var started atomic.Int32
	for _, pri := range []int32{1, 1, 2} {
		ex := load(pri)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				if err := ex.Run(0, vars(i)); err != nil {
					t.Error(err)
					return
				}
				started.Add(1)
			}
		}()
	}
	dict := load(0)
	for started.Load() < 6 { // the others are running
		goruntime.Gosched()
	}
	const passes = 30
	for i := range passes {
		require.NoError(t, dict.Run(0, vars(i)))
	}
	stop.Store(true)
	wg.Wait()

	pool.gate.mu.Lock()
	defer pool.gate.mu.Unlock()
	waited, granted := 0, 0
	for i, e := range events {
		if e.pri != 0 {
			continue
		}
		if e.granted {
			granted++
			continue
		}
		waited++
		// from its request to its grant, nobody else is admitted
		j := i + 1
		for ; !(events[j].pri == 0 && events[j].granted); j++ {
			require.False(t, events[j].granted, "a priority-%d pass admitted while the dictation waited", events[j].pri)
		}
	}
	require.Equal(t, passes, granted)
	require.Positive(t, waited, "the dictation's passes found the pool busy")
}
