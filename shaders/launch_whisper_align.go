package shaders

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
)

// alignScratch lays out whisper_align's scratch, in 4-byte words: each
// head's row sums [heads][rows], frame means and standard deviations
// [heads][cols] each, the cost [path][cols] and the warping's trace
// [path+1][cols+1].
func alignScratch(a *plan.WhisperAlignArgs) uint64 {
	heads, rows, cols := uint64(a.Heads), uint64(a.Rows), uint64(a.Cols)
	path := rows - 1 - uint64(a.First)
	return 4 * (heads*(rows+2*cols) + path*cols + (path+1)*(cols+1))
}

// launchWhisperAlign runs word timing's alignment in three launches: the
// per-head statistics (a threadgroup a head), the filtered and averaged
// cost (a thread a cell) and the time warping with its backtrace (one
// threadgroup, a thread a path row, a barrier an anti-diagonal).
func launchWhisperAlign(d *plan.Dispatch, t *Tuning, dst []Launch) ([]Launch, error) {
	a := plan.DecodeWhisperAlign(d)
	if a.Rows == 0 {
		return dst, nil
	}
	if err := a.Check(); err != nil {
		return dst, err
	}
	scratch := alignScratch(&a)
	if scratch > maxScratch {
		return dst, fmt.Errorf("shaders: whisper_align scratch of %d bytes too large", scratch)
	}
	path, cols := uint32(a.Rows-1-a.First), uint32(a.Cols)
	const cell = 64
	return append(dst,
		Launch{Function: "whisper_align_stats", Groups: [3]uint32{uint32(a.Heads), 1, 1},
			Threads: [3]uint32{simdThreads(max(cols, uint32(a.Rows)), 256, t), 1, 1}, Scratch: uint32(scratch)},
		Launch{Function: "whisper_align_matrix", Groups: [3]uint32{ceilDiv(cols, cell), path, 1},
			Threads: [3]uint32{cell, 1, 1}, Scratch: uint32(scratch)},
		Launch{Function: "whisper_align_dtw", Groups: [3]uint32{1, 1, 1},
			Threads: [3]uint32{simdThreads(path+1, 1024, t), 1, 1}, Scratch: uint32(scratch)},
	), nil
}

func init() { register(plan.WhisperAlign, launchWhisperAlign) }
