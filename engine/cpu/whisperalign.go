package cpu

import (
	"math"
	"slices"

	"github.com/harkapp/hark/engine/plan"
)

// alignBufs is WhisperAlign's working space, grown to the largest
// alignment so far (a dispatch allocates nothing after it).
type alignBufs struct {
	matrix, z, cost, padded, win []float64
	trace                        []int8
}

// grow returns s with length n, zeroed, reusing its array where it fits.
func grow[T float64 | int8](s []T, n int) []T {
	if cap(s) < n {
		s = make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// whisperAlign (plan.WhisperAlignArgs): word timing's alignment matrix
// and its time warping, in float64 as the reference warps (so the CPU
// keeps the word times the host computed before the kernel existed). One
// window's alignment is small: it runs on the calling goroutine.
func (e *Exec) whisperAlign(d *plan.Dispatch) error {
	a := plan.DecodeWhisperAlign(d)
	if err := a.Check(); err != nil {
		return e.errf("%v", err)
	}
	if a.Rows == 0 {
		return nil
	}
	last := a.Heads - 1
	w, err := e.f32(d, plan.SlotWhisperAlignW, satAdd(satAdd(satMul(last/a.Group, a.GroupStride), satMul(last%a.Group, a.HeadStride)), extent(a.Rows, a.Ldw, a.Cols)))
	if err != nil {
		return err
	}
	path := a.Rows - 1 - a.First
	out, err := typedSlice[int32](e, d, plan.SlotWhisperAlignOut, path)
	if err != nil {
		return err
	}
	nTok, cols := a.Rows, a.Cols
	b := &e.align
	b.matrix, b.z = grow(b.matrix, nTok*cols), grow(b.z, nTok*cols)
	b.padded, b.win = grow(b.padded, cols+2*(a.Width/2)), grow(b.win, a.Width)
	matrix, z := b.matrix, b.z
	for h := range a.Heads {
		src := w[h/a.Group*a.GroupStride+h%a.Group*a.HeadStride:]
		for t := range nTok {
			row := src[t*a.Ldw : t*a.Ldw+cols]
			var s float64
			for _, v := range row {
				s += float64(v)
			}
			for j, v := range row {
				z[t*cols+j] = float64(v) / s
			}
		}
		for j := range cols {
			var mean, sq float64
			for t := range nTok {
				mean += z[t*cols+j]
			}
			mean /= float64(nTok)
			for t := range nTok {
				d := z[t*cols+j] - mean
				sq += d * d
			}
			std := math.Sqrt(sq / float64(nTok))
			for t := range nTok {
				z[t*cols+j] = (z[t*cols+j] - mean) / std
			}
		}
		for t := range nTok {
			medianFilter(z[t*cols:(t+1)*cols], a.Width, b.padded, b.win)
		}
		for i, v := range z {
			matrix[i] += v / float64(a.Heads)
		}
	}
	cost := matrix[a.First*cols : (a.First+path)*cols]
	for i := range cost {
		cost[i] = -cost[i]
	}
	b.cost, b.trace = grow(b.cost, (path+1)*(cols+1)), grow(b.trace, (path+1)*(cols+1))
	dtwJumps(cost, path, cols, out, b.cost, b.trace)
	return nil
}

// medianFilter replaces x by its running median over width samples, with
// reflect padding at both ends (as the reference does); a row of at most
// width/2 samples is left as it is. padded (len(x)+width-1) and win
// (width) are its working space.
func medianFilter(x []float64, width int, padded, win []float64) {
	pad := width / 2
	n := len(x)
	if n <= pad {
		return
	}
	for i := range padded {
		j := i - pad
		if j < 0 {
			j = -j
		} else if j >= n {
			j = 2*(n-1) - j
		}
		padded[i] = x[j]
	}
	for i := range n {
		copy(win, padded[i:i+width])
		slices.Sort(win)
		x[i] = win[pad]
	}
}

// dtwJumps aligns rows to columns of cost x along the cheapest monotone
// path and writes, for each row, the column at which the path first
// enters it (−1 on the border). Ties take the reference's order (the
// diagonal when strictly least, then the vertical step, else the left).
// cost and trace ((rows+1)×(cols+1)) are its working space.
func dtwJumps(x []float64, rows, cols int, jumps []int32, cost []float64, trace []int8) {
	inf := math.Inf(1)
	w := cols + 1
	for i := range cost {
		cost[i] = inf
	}
	cost[0] = 0
	for j := 1; j <= cols; j++ {
		for i := 1; i <= rows; i++ {
			c0, c1, c2 := cost[(i-1)*w+j-1], cost[(i-1)*w+j], cost[i*w+j-1]
			var c float64
			var t int8
			switch {
			case c0 < c1 && c0 < c2:
				c, t = c0, 0
			case c1 < c0 && c1 < c2:
				c, t = c1, 1
			default:
				c, t = c2, 2
			}
			cost[i*w+j] = x[(i-1)*cols+j-1] + c
			trace[i*w+j] = t
		}
	}
	for j := range w {
		trace[j] = 2
	}
	for i := 0; i <= rows; i++ {
		trace[i*w] = 1
	}
	i, j := rows, cols
	for i > 0 || j > 0 {
		if i > 0 {
			jumps[i-1] = int32(j - 1)
		}
		switch trace[i*w+j] {
		case 0:
			i, j = i-1, j-1
		case 1:
			i--
		default:
			j--
		}
	}
}
