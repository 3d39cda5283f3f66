package metal

import (
	"fmt"
	"os"
	"sort"
	"unsafe"

	"github.com/harkapp/hark/engine/mapped"
	"github.com/harkapp/hark/engine/plan"
)

// Weights placement. A plan's weight buffers are slices of one memory map
// (plus a few tensors the builders make in Go memory, such as RoPE
// frequencies). Metal can wrap memory without copying only in whole pages,
// so the tensors are grouped into regions: runs of one file mapping whose
// enclosing page ranges touch are wrapped once, and every tensor is bound at
// its offset inside its region. Some tensors are copied instead, into shared
// buffers:
//
//   - tensors outside every file mapping (engine/mapped): Go memory, whose
//     page-rounded range may hold other objects or nothing (a pointer to
//     such a page is one the garbage collector rejects: "found bad pointer
//     in Go heap"), and a map whose pages around the tensor are not all its;
//   - runs under minWrap: too short to be worth a wrap;
//   - stacked ones (plan.Buffer.Parts: Q|K|V or gate|up of a file that
//     holds them apart), which are no one range of the map;
//   - misaligned ones: setBuffer:offset:atIndex: wants the offset aligned
//     to the type the kernel reads (up to 16 bytes), and whisper.cpp's .bin
//     files pack tensors at any byte (GGUF aligns them to 32).

const (
	minWrap = 1 << 20
	// tensorAlign is the alignment a wrapped tensor must have: the widest
	// type a kernel reads from a binding (float4, half8, uint4).
	tensorAlign = 16
	// copyAlign aligns each copied tensor.
	copyAlign = 256
)

// osPage is the OS's page: a mapping's last page is mapped whole.
var osPage = uintptr(os.Getpagesize())

// region is a page-aligned memory range wrapped as one buffer.
type region struct {
	mem []byte
}

// placement says where one weights buffer lives on the device.
type placement struct {
	copied bool
	index  int   // into regions, or into copies when copied
	off    int64 // byte offset of the tensor in its region or copy buffer
}

// weightsLayout is the result of placeWeights.
type weightsLayout struct {
	regions []region
	copies  []int64     // byte sizes of the copy buffers
	place   []placement // per plan buffer (zero for non-weights)
}

// copyTo places n bytes in the copy buffers, opening a new one when the
// current one would pass maxBuf.
func (l *weightsLayout) copyTo(id int, n int64, maxBuf uint64) {
	if len(l.copies) == 0 {
		l.copies = append(l.copies, 0)
	}
	cur := &l.copies[len(l.copies)-1]
	off := (*cur + copyAlign - 1) &^ (copyAlign - 1)
	if *cur > 0 && uint64(off+n) > maxBuf {
		l.copies = append(l.copies, 0)
		cur, off = &l.copies[len(l.copies)-1], 0
	}
	l.place[id] = placement{copied: true, index: len(l.copies) - 1, off: off}
	*cur = off + n
}

// placeWeights groups the weight buffers of p into regions of at most
// maxBuf bytes (Metal's maxBufferLength) on pages of pageSize bytes.
func placeWeights(p *plan.Plan, pageSize int, maxBuf uint64) (weightsLayout, error) {
	if pageSize <= 0 || pageSize&(pageSize-1) != 0 {
		return weightsLayout{}, fmt.Errorf("metal: page size %d is not a power of two", pageSize)
	}
	page := uintptr(pageSize)
	lay := weightsLayout{place: make([]placement, len(p.Buffers))}
	type span struct {
		id         int
		start, end uintptr // the tensor's bytes
		p          unsafe.Pointer
		mapLo      uintptr // the file mapping it lies in
	}
	var spans []span
	for i, b := range p.Buffers {
		if b.Kind != plan.BufWeights {
			continue
		}
		if b.WeightsLen() < b.Size || b.Size < 0 {
			return weightsLayout{}, fmt.Errorf("metal: plan %s: weights buffer %q has %d bytes of data, declared %d", p.Name, b.Name, b.WeightsLen(), b.Size)
		}
		if uint64(b.Size) > maxBuf {
			return weightsLayout{}, fmt.Errorf("metal: plan %s: tensor %q (%d bytes) exceeds the device's largest buffer (%d bytes)", p.Name, b.Name, b.Size, maxBuf)
		}
		if b.Size == 0 {
			lay.place[i] = placement{copied: true, index: -1}
			continue
		}
		ptr := unsafe.Pointer(unsafe.SliceData(b.Data))
		s := uintptr(ptr)
		if b.Parts != nil || s%tensorAlign != 0 { // stacked parts are copied too
			lay.copyTo(i, b.Size, maxBuf)
			continue
		}
		// Only a file mapping's pages around a tensor are known to be
		// there: Go memory (rope tables, converted tensors, a file read
		// into memory) is copied, since a page-rounded pointer into the
		// heap may point at no object at all.
		mlo, mhi, ok := mapped.Bounds(b.Data[:b.Size])
		lo, hi := s&^(page-1), (s+uintptr(b.Size)+page-1)&^(page-1)
		if !ok || lo < mlo || hi > (mhi+osPage-1)&^(osPage-1) {
			lay.copyTo(i, b.Size, maxBuf)
			continue
		}
		spans = append(spans, span{id: i, start: s, end: s + uintptr(b.Size), p: ptr, mapLo: mlo})
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })

	// Merge spans whose page ranges touch, splitting runs that would
	// exceed maxBuf at tensor boundaries.
	flush := func(run []span, lo, hi uintptr) {
		if len(run) == 0 {
			return
		}
		if hi-lo < minWrap {
			for _, s := range run {
				lay.copyTo(s.id, int64(s.end-s.start), maxBuf)
			}
			return
		}
		r := len(lay.regions)
		base := unsafe.Add(run[0].p, -int(run[0].start-lo))
		lay.regions = append(lay.regions, region{mem: unsafe.Slice((*byte)(base), hi-lo)})
		for _, s := range run {
			lay.place[s.id] = placement{index: r, off: int64(s.start - lo)}
		}
	}
	var run []span
	var runLo, runHi uintptr
	for _, s := range spans {
		lo := s.start &^ (page - 1)
		hi := (s.end + page - 1) &^ (page - 1)
		if uint64(hi-lo) > maxBuf {
			// Page rounding pushed it over: copy it instead.
			lay.copyTo(s.id, int64(s.end-s.start), maxBuf)
			continue
		}
		if len(run) > 0 && s.mapLo == run[0].mapLo && lo <= runHi && uint64(max(hi, runHi)-runLo) <= maxBuf {
			run = append(run, s)
			runHi = max(runHi, hi)
			continue
		}
		flush(run, runLo, runHi)
		run, runLo, runHi = append(run[:0:0], s), lo, hi
	}
	flush(run, runLo, runHi)
	return lay, nil
}
