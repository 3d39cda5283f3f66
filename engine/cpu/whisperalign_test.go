package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/plan"
)

// BenchmarkWhisperAlign times word timing's alignment as a window of the
// kit's tiny.en has it (12 alignment heads, 64 text tokens and the start
// sequence, 1500 frames): the float64 matrix, median filter and warping the
// host ran before the GPUs took it over (issue #36), now the CPU's kernel.
func BenchmarkWhisperAlign(b *testing.B) {
	const heads, rows, cols = 12, 67, 1500
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, heads*rows*cols)
	for i := range w {
		w[i] = 0.01 + r.Float32()
	}
	h := newHarness(b)
	h.add(plan.WhisperAlignArgs{W: bind(h.f32("w", w)), Out: bind(h.i32("out", make([]int32, rows))), Heads: heads, Group: 6,
		GroupStride: 6 * rows * cols, HeadStride: rows * cols, Ldw: cols, Rows: rows, Cols: cols, First: 1, Width: 7}.Dispatch())
	ex := h.load()
	var v plan.Vars
	for b.Loop() {
		if err := ex.Run(0, &v); err != nil {
			b.Fatal(err)
		}
	}
}
