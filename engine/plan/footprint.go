package plan

import "fmt"

// Footprint is the memory a plan declares, by the buffers' kinds: what a
// backend allocates for it beside its own launch scratch.
type Footprint struct {
	Weights, Scratch, State, IO int64
}

// Footprint sums the plan's buffers by kind.
func (p *Plan) Footprint() Footprint {
	var f Footprint
	for _, b := range p.Buffers {
		switch b.Kind {
		case BufWeights:
			f.Weights += b.Size
		case Scratch:
			f.Scratch += b.Size
		case State:
			f.State += b.Size
		case IO:
			f.IO += b.Size
		}
	}
	return f
}

// String is the footprint in MiB, as the benches print it.
func (f Footprint) String() string {
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	return fmt.Sprintf("weights %.1f MiB, scratch %.1f MiB, state %.1f MiB, io %.1f MiB",
		mib(f.Weights), mib(f.Scratch), mib(f.State), mib(f.IO))
}
