package plan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFootprint(t *testing.T) {
	var p Plan
	p.AddBuffer(Buffer{Name: "w", Kind: BufWeights, Size: 3 << 20})
	p.AddBuffer(Buffer{Name: "x", Kind: Scratch, Size: 1 << 20})
	p.AddBuffer(Buffer{Name: "h", Kind: Scratch, Size: 1 << 19})
	p.AddBuffer(Buffer{Name: "kv", Kind: State, Size: 2 << 20})
	p.AddBuffer(Buffer{Name: "logits", Kind: IO, Size: 1 << 18})
	f := p.Footprint()
	require.Equal(t, Footprint{Weights: 3 << 20, Scratch: 3 << 19, State: 2 << 20, IO: 1 << 18}, f)
	require.Equal(t, "weights 3.0 MiB, scratch 1.5 MiB, state 2.0 MiB, io 0.2 MiB", f.String())
}
