package cpu

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// TestBarrierCount: what the counter counts, whatever the helpers'
// timing: a synchronous job split over helpers; a fence or wait after an
// asynchronous one split over helpers, once; nothing for work the caller
// runs alone or for a fence with nothing published since the last.
func TestBarrierCount(t *testing.T) {
	for _, spin := range []bool{false, true} {
		p := newPool(3, 0)
		if spin {
			p.Begin()
		}
		job := func() *countTask { return &countTask{hits: make([]atomic.Int32, 64)} }
		var c BarrierCount
		p.CountBarriers(&c)
		p.tagBarriers(plan.MatVec)
		p.Fence()          // nothing published: 0
		p.Run(8, 8, job()) // the caller alone: 0
		p.RunAsync(8, 8, job())
		p.Fence()                // 0: the caller ran it alone
		p.Run(64, 4, job())      // 1
		p.RunAsync(64, 4, job()) // published to helpers
		p.tagBarriers(plan.RopeAttention)
		p.Fence() // 1
		p.Fence() // 0
		g := p.RunAsync(64, 4, job())
		p.tagBarriers(plan.Argmax)
		p.WaitGen(g) // 1
		p.WaitGen(g) // 1 more: waiting for one job is no fence
		p.Fence()    // 1
		p.CountBarriers(nil)
		p.Run(64, 4, job()) // not counted
		require.Equal(t, map[plan.Kernel]uint64{plan.MatVec: 1, plan.RopeAttention: 1, plan.Argmax: 3}, c.ByKernel(), "spin=%v", spin)
		require.Equal(t, uint64(5), c.Total())
		if spin {
			p.End()
		}
		p.Close()
	}
}
