package metal

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
)

// Weights placement. A plan's weight buffers are slices of one memory map
// (plus a few small tensors the builders make in Go memory, such as RoPE
// frequencies). Metal can wrap memory without copying only in whole pages,
// so the tensors are grouped into regions: runs whose enclosing page ranges
// touch are wrapped once, and every tensor is bound at its offset inside its
// region. Small tensors are copied instead into one shared buffer, so no
// page of the Go heap is ever handed to the GPU.

// Tensors under smallTensor are copied (norm weights, biases, RoPE
// frequencies: kilobytes), whatever memory they are in, so the tensors that
// the builders make in Go memory (all small) never have their pages handed
// to the GPU; regions under minWrap are copied as well.
const (
	smallTensor = 64 << 10
	minWrap     = 1 << 20
)

// copyAlign aligns each tensor copied into the small-weights buffer (the
// widest vector load, and Metal's constant-buffer offset alignment).
const copyAlign = 256

// region is a page-aligned memory range wrapped as one buffer.
type region struct {
	mem []byte
}

// placement says where one weights buffer lives on the device.
type placement struct {
	region int   // index into regions, or -1 for the copied buffer
	off    int64 // byte offset of the tensor in its region or the copy
}

// weightsLayout is the result of placeWeights.
type weightsLayout struct {
	regions  []region
	place    []placement // per plan buffer (zero for non-weights)
	copySize int64       // bytes of the small-weights buffer
}

// placeWeights groups the weight buffers of p into regions of at most
// maxRegion bytes (Metal's maxBufferLength) on pages of pageSize bytes.
func placeWeights(p *plan.Plan, pageSize int, maxRegion uint64) (weightsLayout, error) {
	if pageSize <= 0 || pageSize&(pageSize-1) != 0 {
		return weightsLayout{}, fmt.Errorf("metal: page size %d is not a power of two", pageSize)
	}
	page := uintptr(pageSize)
	lay := weightsLayout{place: make([]placement, len(p.Buffers))}
	type span struct {
		id         int
		start, end uintptr // the tensor's bytes
		p          unsafe.Pointer
	}
	var spans []span
	for i, b := range p.Buffers {
		if b.Kind != plan.BufWeights {
			continue
		}
		if int64(len(b.Data)) < b.Size || b.Size < 0 {
			return weightsLayout{}, fmt.Errorf("metal: plan %s: weights buffer %q has %d bytes of data, declared %d", p.Name, b.Name, len(b.Data), b.Size)
		}
		if b.Size == 0 {
			lay.place[i] = placement{region: -1}
			continue
		}
		if b.Size < smallTensor {
			lay.copySize = (lay.copySize + copyAlign - 1) &^ (copyAlign - 1)
			lay.place[i] = placement{region: -1, off: lay.copySize}
			lay.copySize += b.Size
			continue
		}
		s := uintptr(unsafe.Pointer(unsafe.SliceData(b.Data)))
		spans = append(spans, span{id: i, start: s, end: s + uintptr(b.Size), p: unsafe.Pointer(unsafe.SliceData(b.Data))})
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })

	// Merge spans whose page ranges touch, then split runs that would
	// exceed maxRegion at tensor boundaries.
	flush := func(run []span) {
		if len(run) == 0 {
			return
		}
		lo := run[0].start &^ (page - 1)
		hi := (run[len(run)-1].end + page - 1) &^ (page - 1)
		for _, s := range run {
			hi = max(hi, (s.end+page-1)&^(page-1))
		}
		if hi-lo < minWrap {
			for _, s := range run {
				lay.copySize = (lay.copySize + copyAlign - 1) &^ (copyAlign - 1)
				lay.place[s.id] = placement{region: -1, off: lay.copySize}
				lay.copySize += int64(s.end - s.start)
			}
			return
		}
		r := len(lay.regions)
		base := unsafe.Add(run[0].p, -int(run[0].start-lo))
		lay.regions = append(lay.regions, region{mem: unsafe.Slice((*byte)(base), hi-lo)})
		for _, s := range run {
			lay.place[s.id] = placement{region: r, off: int64(s.start - lo)}
		}
	}
	var run []span
	var runLo, runHi uintptr
	for _, s := range spans {
		lo := s.start &^ (page - 1)
		hi := (s.end + page - 1) &^ (page - 1)
		if uint64(hi-lo) > maxRegion {
			return weightsLayout{}, fmt.Errorf("metal: plan %s: tensor %q (%d bytes) exceeds the device's largest buffer (%d bytes)", p.Name, p.Buffers[s.id].Name, s.end-s.start, maxRegion)
		}
		if len(run) > 0 && lo <= runHi && uint64(max(hi, runHi)-runLo) <= maxRegion {
			run = append(run, s)
			runHi = max(runHi, hi)
			continue
		}
		flush(run)
		run, runLo, runHi = append(run[:0:0], s), lo, hi
	}
	flush(run)
	return lay, nil
}
