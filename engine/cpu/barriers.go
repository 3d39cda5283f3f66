package cpu

import "github.com/harkapp/hark/engine/plan"

// BarrierCount counts a pool's barriers by the kernel whose dispatch took
// them: the points where the caller waits for work it handed to helpers.
// It counts what the code asks for, not what the clock saw, so the same
// plan on the same worker count gives the same count on any machine: a
// synchronous job split over helpers (Run) is one; a fence, a WaitGen or a
// ring slot's reuse is one when an asynchronous job split over helpers
// was published since the last barrier, whether or not the helpers had
// already finished. The pass's closing fence counts under kernel 0.
type BarrierCount struct {
	byKernel [64]uint64
}

// ByKernel is the count of each kernel that took a barrier (0: a pass's
// end).
func (c *BarrierCount) ByKernel() map[plan.Kernel]uint64 {
	m := map[plan.Kernel]uint64{}
	for k, n := range c.byKernel {
		if n != 0 {
			m[plan.Kernel(k)] = n
		}
	}
	return m
}

// Total is the count of every kernel.
func (c *BarrierCount) Total() uint64 {
	var n uint64
	for _, v := range c.byKernel {
		n += v
	}
	return n
}

// CountBarriers makes p count its barriers into c from now on (nil stops
// it). Set it while no pass runs.
func (p *Pool) CountBarriers(c *BarrierCount) {
	p.mu.Lock()
	p.count, p.unfenced = c, false
	p.mu.Unlock()
}

// tagBarriers attributes the barriers that follow to kernel k (0: none).
// Only the passes' caller calls it, so it needs no lock.
func (p *Pool) tagBarriers(k plan.Kernel) {
	if p.count != nil {
		p.tag = int(k) & 63
	}
}

// counted records a barrier: the caller waits for a synchronous job
// (sync), for every job (a fence) or for the asynchronous job gen. Waiting
// for asynchronous work counts only when a job split over helpers was
// published after the last counted fence (and, for one job, when it is
// such a job). The caller holds mu.
func (p *Pool) counted(sync, fence bool, gen uint64) {
	if p.count == nil {
		return
	}
	if !sync {
		if !p.unfenced || !fence && gen <= p.fencedGen {
			return
		}
		if fence {
			p.unfenced, p.fencedGen = false, p.gen
		}
	}
	p.count.byKernel[p.tag]++
}
