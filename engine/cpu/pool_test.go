package cpu

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Do(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestPoolCoversEveryItemOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		p := NewPool(workers)
		for _, n := range []int{1, 7, 64, 1001} {
			for _, grain := range []int{1, 3, 64, 5000} {
				c := &countTask{hits: make([]atomic.Int32, n)}
				p.Run(n, grain, c)
				for i := range c.hits {
					require.Equal(t, int32(1), c.hits[i].Load(), "workers=%d n=%d grain=%d item %d", workers, n, grain, i)
				}
			}
		}
		p.Close()
	}
}

func TestPoolRunAllocatesNothing(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	c := &countTask{hits: make([]atomic.Int32, 256)}
	allocs := testing.AllocsPerRun(100, func() { p.Run(256, 16, c) })
	require.Zero(t, allocs)
}
