package cpu

import "github.com/harkapp/hark/engine/blas"

// mulBLAS is the matrix-matrix path through the system sgemm. f32 weights
// go straight in; other types are dequantized a tile of rows at a time
// (in parallel on the pool) and each tile is one sgemm. sgemm is called
// from this goroutine only: OpenBLAS runs its own threads.
func (mm *MatMul) mulBLAS(a *mulArgs) error {
	beta := float32(0)
	if a.bias != nil || a.res != nil {
		// out = res + bias first, then sgemm accumulates (beta = 1). This
		// also covers res aliasing out.
		mm.prep.a = a
		mm.pool.Run(a.m, grainFor(a.m, mm.pool.Workers(), 8), &mm.prep)
		mm.prep.a = nil
		beta = 1
	}
	if a.kd.id == kindF32 {
		return blas.Sgemm(false, true, a.m, a.n, a.k, 1, a.x, a.ldx,
			f32View(a.w, a.n*a.k), a.k, beta, a.out, a.ldo)
	}
	rows := min(a.n, max(16, tileFloats/a.k))
	if cap(mm.tile) < rows*a.k {
		mm.tile = make([]float32, rows*a.k)
	}
	for j0 := 0; j0 < a.n; j0 += rows {
		j1 := min(a.n, j0+rows)
		tile := mm.tile[:(j1-j0)*a.k]
		mm.dequantTile(a, j0, j1, tile)
		if err := blas.Sgemm(false, true, a.m, j1-j0, a.k, 1, a.x, a.ldx,
			tile, a.k, beta, a.out[j0:], a.ldo); err != nil {
			return err
		}
	}
	return nil
}

// dequantTile expands weight rows [j0, j1) into tile on the pool.
func (mm *MatMul) dequantTile(a *mulArgs, j0, j1 int, tile []float32) {
	mm.deq.a, mm.deq.j0, mm.deq.tile = a, j0, tile
	mm.pool.Run(j1-j0, grainFor(j1-j0, mm.pool.Workers(), 8), &mm.deq)
	mm.deq.a, mm.deq.tile = nil, nil
}

type dequantTask struct {
	a    *mulArgs
	j0   int
	tile []float32
}

func (t *dequantTask) Do(_, lo, hi int) {
	a := t.a
	for r := lo; r < hi; r++ {
		j := t.j0 + r
		dequantRow(a.kd, a.w[j*a.rb:(j+1)*a.rb], t.tile[r*a.k:(r+1)*a.k])
	}
}

// prepTask writes out = res + bias (either may be nil) row by row.
type prepTask struct{ a *mulArgs }

func (t *prepTask) Do(_, lo, hi int) {
	a := t.a
	for i := lo; i < hi; i++ {
		o := a.out[i*a.ldo : i*a.ldo+a.n]
		switch {
		case a.res != nil && a.bias != nil:
			r := a.res[i*a.ldr : i*a.ldr+a.n]
			for j := range o {
				o[j] = r[j] + a.bias[j]
			}
		case a.res != nil:
			copy(o, a.res[i*a.ldr:i*a.ldr+a.n])
		default:
			copy(o, a.bias[:a.n])
		}
	}
}

// gemmTask is the pure-Go tiled GEMM used when no BLAS is loaded.
type gemmTask struct{ a *mulArgs }
