package cpu

import (
	"sync"

	"github.com/harkapp/hark/engine/blas"
)

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
	if w := mm.pool.Workers(); w > 1 && blas.Threads() != 0 {
		// A library that takes a thread count runs one thread per call and
		// the pool splits the product by weight rows: a descheduled worker
		// on a shared machine then delays only its chunk instead of stalling
		// the library's whole thread team at its barriers, no library
		// threads spin against the pool, and each chunk's dequantization
		// overlaps the other workers' sgemm.
		if blas.Threads() != 1 {
			blas.SetThreads(1)
		}
		return mm.gemmSplit(a, beta, w)
	}
	mm.pool.quiet() // the library's threads take the CPUs
	defer mm.pool.loud()
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

func (t *dequantTask) Do(w, lo, hi int) {
	a := t.a
	for r := lo; r < hi; r++ {
		j := t.j0 + r
		dequantRow(a.kd, a.wrow(w, j), t.tile[r*a.k:(r+1)*a.k])
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

// splitRows is the preferred number of weight rows per gemmSplit chunk:
// enough for sgemm to run at full speed, few enough that every worker
// gets several chunks to balance on.
var splitRows = 128

// gemmSplit runs the product as independent single-threaded sgemm calls
// over tiles of weight rows × input rows, one tile at a time per pool
// worker.
func (mm *MatMul) gemmSplit(a *mulArgs, beta float32, workers int) error {
	rows, mrows := splitTiles(a.n, a.m, a.k, workers)
	if a.kd.id != kindF32 {
		if need := workers * rows * a.k; len(mm.tile) < need {
			mm.tile = make([]float32, need)
		}
	}
	t := &mm.split
	t.a, t.beta, t.rows, t.mrows, t.tile, t.err = a, beta, rows, mrows, mm.tile, nil
	t.mtiles = (a.m + mrows - 1) / mrows
	mm.pool.Run((a.n+rows-1)/rows*t.mtiles, 1, t)
	err := t.err
	t.a, t.tile, t.err = nil, nil, nil
	return err
}

// splitChunk is gemmSplit's rows per chunk: at most splitRows, at least
// 32 (sgemm slows down on thinner slices), two chunks per worker when n is
// small, and a tile of at most tileFloats.
func splitChunk(n, k, workers int) int {
	rows := min(splitRows, max(32, (n+2*workers-1)/(2*workers)))
	return max(1, min(rows, tileFloats/k))
}

// splitMinM is the fewest input rows of a tile that gemmSplit cuts along m
// (a variable so tests can turn the cut off).
var splitMinM = 16

// splitTiles is gemmSplit's tile: splitChunk's weight rows and, where
// those leave workers without a chunk, input rows cut to give two tiles per
// worker (at least splitMinM rows each). The encoder's attention values
// product (64 weight rows: the head's values, 1500 keys deep) otherwise ran
// as 2 chunks on 2 of 16 workers and took most of a window's time. Where
// every worker has a chunk the products stay whole: cutting them only adds
// calls.
func splitTiles(n, m, k, workers int) (rows, mrows int) {
	rows, mrows = splitChunk(n, k, workers), m
	if chunks := (n + rows - 1) / rows; chunks < workers {
		cuts := (2*workers + chunks - 1) / chunks
		mrows = max(splitMinM, (m+cuts-1)/cuts)
	}
	return rows, mrows
}

// splitCalls is how many sgemm calls gemmSplit makes (tests).
func splitCalls(n, m, k, workers int) int {
	rows, mrows := splitTiles(n, m, k, workers)
	return (n + rows - 1) / rows * ((m + mrows - 1) / mrows)
}

type splitTask struct {
	a           *mulArgs
	beta        float32
	rows, mrows int
	mtiles      int // input-row tiles per chunk of weight rows
	tile        []float32
	mu          sync.Mutex
	err         error
}

func (t *splitTask) Do(w, lo, hi int) {
	a := t.a
	for c := lo; c < hi; c++ {
		j0, i0 := c/t.mtiles*t.rows, c%t.mtiles*t.mrows
		j1, i1 := min(a.n, j0+t.rows), min(a.m, i0+t.mrows)
		var b []float32
		if a.kd.id == kindF32 {
			b = f32View(a.w[j0*a.rb:], (j1-j0)*a.k)
		} else {
			b = t.tile[w*t.rows*a.k : (w*t.rows+j1-j0)*a.k]
			for j := j0; j < j1; j++ {
				dequantRow(a.kd, a.wrow(w, j), b[(j-j0)*a.k:(j-j0+1)*a.k])
			}
		}
		if err := blas.Sgemm(false, true, i1-i0, j1-j0, a.k, 1, a.x[i0*a.ldx:], a.ldx,
			b, a.k, t.beta, a.out[i0*a.ldo+j0:], a.ldo); err != nil {
			t.mu.Lock()
			if t.err == nil {
				t.err = err
			}
			t.mu.Unlock()
		}
	}
}
