package cpu

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// embedTask copies (or adds) dequantized table rows for a list of ids,
// plus the rows of add where it is set (row stride lda; 0: its first row).
type embedTask struct {
	t        ggml.Type
	table    []byte
	rowBytes int
	dim      int
	ids      []int32
	out      []float32
	ldo      int
	acc      bool
	add      []float32
	lda      int
	tmp      [][]float32
	// packed is the table's pack where a product packed it (tied
	// embeddings): rows below packed.n are read from it, through rowb
	// (rowBytes per worker), since the original's pages are released.
	packed *packed
	rowb   []byte
}

func (k *embedTask) Do(w, lo, hi int) {
	for t := lo; t < hi; t++ {
		id := int(k.ids[t])
		row := k.table[id*k.rowBytes : (id+1)*k.rowBytes]
		if k.packed != nil && id < k.packed.n {
			row = k.rowb[w*k.rowBytes : (w+1)*k.rowBytes]
			k.packed.row(id, row)
		}
		o := k.out[t*k.ldo : t*k.ldo+k.dim]
		if !k.acc {
			embedRow(k.t, row, o)
		} else {
			tmp := k.tmp[w][:k.dim]
			embedRow(k.t, row, tmp)
			for i, v := range tmp {
				o[i] += v
			}
		}
		if k.add != nil {
			a := k.add[t*k.lda : t*k.lda+k.dim]
			for i, v := range a {
				o[i] += v
			}
		}
	}
}

func (e *Exec) embed(d *plan.Dispatch) error {
	p := plan.DecodeEmbed(d)
	dim, n, ldo := p.Dim, p.N, p.Ldo
	if n == 0 || dim == 0 {
		return nil
	}
	rb, err := ggml.RowBytes(d.Type, int64(dim))
	if err != nil {
		return e.errf("table rows: %v", err)
	}
	if n > 1 && ldo < dim {
		return e.errf("ldo %d smaller than dim %d", ldo, dim)
	}
	tb, _, _ := e.bind(d, 0)
	off := d.Bind[0].Off
	if off > uint64(len(tb.b)) {
		return e.errf("table offset %d beyond buffer %q", off, tb.name)
	}
	rows := (uint64(len(tb.b)) - off) / uint64(rb)
	ids, err := typedSlice[int32](e, d, 1, n)
	if err != nil {
		return err
	}
	for t, id := range ids {
		if id < 0 || uint64(id) >= rows {
			return e.errf("token %d: id %d outside the table's %d rows", t, id, rows)
		}
	}
	out, err := e.f32(d, 2, extent(n, ldo, dim))
	if err != nil {
		return err
	}
	var add []float32
	if present(d, plan.SlotEmbedAdd) {
		rows := n
		if p.Lda == 0 {
			rows = 1
		} else if n > 1 && p.Lda < dim {
			return e.errf("lda %d smaller than dim %d", p.Lda, dim)
		}
		if add, err = e.f32(d, plan.SlotEmbedAdd, extent(rows, p.Lda, dim)); err != nil {
			return err
		}
	}
	e.ensureWorker(dim)
	k := &e.embedT
	*k = embedTask{t: d.Type, table: tb.b[off:], rowBytes: int(rb), dim: dim, ids: ids, out: out, ldo: ldo,
		acc: p.Flags&plan.FlagAccumulate != 0, add: add, lda: p.Lda, tmp: e.wsf}
	if pk := e.mm.packs[&k.table[0]]; pk != nil && pk.t == d.Type && pk.k == dim {
		k.packed, k.rowb = pk, e.mm.rowScratch(int(rb))
	}
	e.pool.Run(n, chunkGrain(dim), k)
	k.table, k.ids, k.out, k.add, k.tmp, k.packed, k.rowb = nil, nil, nil, nil, nil, nil, nil
	return nil
}
