package metal

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/mapped"
	"github.com/harkapp/hark/engine/plan"
)

// pageAligned stands for a mapped model file: n bytes on page boundaries,
// registered as a mapping (engine/mapped) as mapfile registers its maps,
// until the test ends (the cleanup also keeps the memory alive until then:
// a registration outliving it would vouch for whatever Go puts there next).
func pageAligned(t *testing.T, n, page int) []byte {
	raw := make([]byte, n+page)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))) & (page - 1)
	m := raw[off : off+n : off+n]
	mapped.Register(m)
	t.Cleanup(func() { mapped.Unregister(m) })
	return m
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func TestPlaceWeightsGroupsTheMapIntoRegions(t *testing.T) {
	const page = 16384
	mapped := pageAligned(t, 8<<20, page)
	small := make([]byte, 64)[:8:8] // Go memory (a 64-byte size class: 16-aligned): must be copied
	p := &plan.Plan{Name: "t"}
	a := p.AddBuffer(plan.Buffer{Name: "a", Kind: plan.BufWeights, Size: 3 << 20, Data: mapped[96 : 96+3<<20]})
	s := p.AddBuffer(plan.Buffer{Name: "small", Kind: plan.BufWeights, Size: 8, Data: small})
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.Scratch, Size: 64})
	b := p.AddBuffer(plan.Buffer{Name: "b", Kind: plan.BufWeights, Size: 2 << 20, Data: mapped[3<<20+208 : 5<<20+208]})
	// A tensor bound twice under two names (tied embeddings) overlaps.
	c := p.AddBuffer(plan.Buffer{Name: "c", Kind: plan.BufWeights, Size: 1 << 20, Data: mapped[96 : 96+1<<20]})
	// A large tensor at an odd address (whisper.cpp .bin files) is copied.
	odd := p.AddBuffer(plan.Buffer{Name: "odd", Kind: plan.BufWeights, Size: 100 << 10, Data: mapped[6<<20+3 : 6<<20+3+100<<10]})
	empty := p.AddBuffer(plan.Buffer{Name: "empty", Kind: plan.BufWeights})

	lay, err := placeWeights(p, page, 1<<30)
	require.NoError(t, err)
	require.Equal(t, 1, len(lay.regions), "a and b share a page: one region")
	r := lay.regions[0].mem
	require.Zero(t, addr(r)%page)
	require.Zero(t, len(r)%page)
	for _, id := range []plan.BufID{a, b, c} {
		pl := lay.place[id]
		require.False(t, pl.copied)
		require.Equal(t, 0, pl.index)
		require.Equal(t, addr(p.Buffers[id].Data), addr(r)+uintptr(pl.off), "buffer %s", p.Buffers[id].Name)
	}
	// copied in buffer order: small (Go memory), then odd
	require.Equal(t, placement{copied: true, index: 0, off: 0}, lay.place[s])
	require.Equal(t, placement{copied: true, index: 0, off: 256}, lay.place[odd])
	require.Equal(t, placement{copied: true, index: -1}, lay.place[empty])
	require.Equal(t, []int64{256 + 100<<10}, lay.copies)
	require.Equal(t, placement{}, lay.place[x])

	// A device whose largest buffer is 4 MiB splits the map at a tensor
	// boundary (and would split the copies); a tensor larger than that is
	// an error.
	lay, err = placeWeights(p, page, 4<<20)
	require.NoError(t, err)
	require.Equal(t, 2, len(lay.regions))
	require.Equal(t, lay.place[a].index, lay.place[c].index)
	require.NotEqual(t, lay.place[a].index, lay.place[b].index)
	for _, rg := range lay.regions {
		require.LessOrEqual(t, len(rg.mem), 4<<20)
	}
	_, err = placeWeights(p, page, 2<<20)
	require.ErrorContains(t, err, `tensor "a"`)

	_, err = placeWeights(p, 3000, 1<<30)
	require.ErrorContains(t, err, "power of two")
	p.Buffers[a].Size = 4 << 20
	_, err = placeWeights(p, page, 1<<30)
	require.ErrorContains(t, err, "declared")
}

func TestPlaceWeightsCopies(t *testing.T) {
	const page = 4096
	mapped := pageAligned(t, 2<<20, page)
	p := &plan.Plan{Name: "t"}
	var ids []plan.BufID
	for i := range 5 {
		ids = append(ids, p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 1000, Data: mapped[i*40000 : i*40000+1000]}))
	}
	// Two 100 KiB tensors on distant pages: each run is under minWrap.
	big1 := p.AddBuffer(plan.Buffer{Name: "big1", Kind: plan.BufWeights, Size: 100 << 10, Data: mapped[1<<20 : 1<<20+100<<10]})
	big2 := p.AddBuffer(plan.Buffer{Name: "big2", Kind: plan.BufWeights, Size: 100 << 10, Data: mapped[1<<20+400<<10 : 1<<20+500<<10]})
	lay, err := placeWeights(p, page, 1<<30)
	require.NoError(t, err)
	require.Equal(t, 0, len(lay.regions))
	for i, id := range ids {
		require.Equal(t, placement{copied: true, off: int64(i * 1024)}, lay.place[id], "1000 bytes rounded up to 1024")
	}
	require.Equal(t, placement{copied: true, off: 5 * 1024}, lay.place[big1])
	require.Equal(t, placement{copied: true, off: 5*1024 + 100<<10}, lay.place[big2])
	require.Equal(t, []int64{5*1024 + 200<<10}, lay.copies)

	// Copies are split to respect the device's largest buffer.
	lay, err = placeWeights(p, page, 150<<10)
	require.NoError(t, err)
	require.Equal(t, []int64{5*1024 + 100<<10, 100 << 10}, lay.copies)
	require.Equal(t, placement{copied: true, index: 1}, lay.place[big2])
}

// TestStackedWeightsAreCopied: a weights buffer stacked from parts of the
// map (plan.Buffer.Parts: Q|K|V of a file in name order) is no one range of
// it, so it is copied, parts end to end, however large.
func TestStackedWeightsAreCopied(t *testing.T) {
	ty := toyPlan(t)
	mapped := ty.p.Buffers[ty.w].Data
	parts := [][]byte{mapped[3<<20 : 3<<20+4096], mapped[0 : 1<<20], mapped[2<<20 : 2<<20+8]}
	var want []byte
	for _, p := range parts {
		want = append(want, p...)
	}
	id := ty.p.AddBuffer(plan.Buffer{Name: "qkv (fused)", Kind: plan.BufWeights, Size: int64(len(want)), Parts: parts})

	lay, err := placeWeights(ty.p, 16384, 1<<30)
	require.NoError(t, err)
	require.True(t, lay.place[id].copied)

	b, dev := newTestBackend()
	x, err := b.Load(ty.p)
	require.NoError(t, err)
	defer x.Close()
	bd := x.(*Exec).binds[id]
	require.Equal(t, want, dev.bufs[bd.h].mem[bd.base:bd.base+uint64(len(want))])

	ty.p.Buffers[id].Size++
	_, err = b.Load(ty.p)
	require.ErrorContains(t, err, "declared")
}

// TestPlaceWeightsCopiesGoMemory: a tensor in Go memory is copied however
// large and aligned it is, and however close to a mapping it lies: its
// page-rounded range is not known to hold anything, and a region pointer
// rounded down into the heap is one the garbage collector rejects (metal's
// tests once died of it in GC: "found bad pointer in Go heap").
func TestPlaceWeightsCopiesGoMemory(t *testing.T) {
	const page = 16384
	heap := make([]byte, 2<<20+page)
	off := int(-addr(heap)) & (page - 1)
	big := heap[off+4096 : off+4096+2<<20] // 16-aligned, a megabyte and more
	m := pageAligned(t, 4<<20, page)
	p := &plan.Plan{Name: "t"}
	g := p.AddBuffer(plan.Buffer{Name: "g", Kind: plan.BufWeights, Size: int64(len(big)), Data: big})
	w := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 2 << 20, Data: m[64 : 64+2<<20]})
	lay, err := placeWeights(p, page, 1<<30)
	require.NoError(t, err)
	require.Equal(t, placement{copied: true, index: 0, off: 0}, lay.place[g])
	require.False(t, lay.place[w].copied)
	require.Len(t, lay.regions, 1)
	require.Equal(t, addr(m), addr(lay.regions[0].mem), "the region starts at the map's first page, inside it")

	// the last page of a map is mapped whole, but not the page after it
	tail := pageAligned(t, 3<<20, page)
	p2 := &plan.Plan{Name: "t2"}
	e := p2.AddBuffer(plan.Buffer{Name: "end", Kind: plan.BufWeights, Size: 2 << 20, Data: tail[1<<20 : 3<<20]})
	lay, err = placeWeights(p2, page, 1<<30)
	require.NoError(t, err)
	require.False(t, lay.place[e].copied, "ends on the map's last page")
	p2.Buffers[e].Data = tail[1<<20-16 : 3<<20-16]
	lay, err = placeWeights(p2, 2*page, 1<<30)
	require.NoError(t, err)
	require.True(t, lay.place[e].copied || addr(lay.regions[0].mem) >= addr(tail), "a device page larger than the map's alignment never reaches before the map")
}
