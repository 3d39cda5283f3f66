package cuda

import (
	"errors"
	"fmt"
)

// Copy bandwidth: the memory ceiling decode kernels are measured against
// (hark bench llm prints it next to the achieved weight bandwidth).

// CopyBandwidth measures device-to-device copy bandwidth over n bytes:
// warm copies first (uncounted), then reps copies each timed by events on
// the stream; the result is bytes read plus written (2n) over the mean
// copy time, in bytes per second. n should be well past the L2 (1 GiB on
// an H200, whose L2 is 50 MiB).
func (b *Backend) CopyBandwidth(n int64, warm, reps int) (float64, error) {
	if n <= 0 || reps <= 0 || warm < 0 {
		return 0, fmt.Errorf("cuda: copy bandwidth: bad size %d or repetitions %d/%d", n, warm, reps)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errors.New("cuda: backend closed")
	}
	v := b.dev
	d := v.d
	v.mu.Lock()
	defer v.mu.Unlock()
	var total float64 // seconds over the timed copies
	err := v.do(func() error {
		var src, dst dptr
		if err := d.err("cuMemAlloc", d.cuMemAlloc(&src, uint64(n))); err != nil {
			return fmt.Errorf("cuda: copy bandwidth: %d bytes: %w", n, err)
		}
		defer d.cuMemFree(src)
		if err := d.err("cuMemAlloc", d.cuMemAlloc(&dst, uint64(n))); err != nil {
			return fmt.Errorf("cuda: copy bandwidth: %d bytes: %w", n, err)
		}
		defer d.cuMemFree(dst)
		// not zeros: the source is written once, so no page is untouched
		if err := d.err("cuMemsetD8Async", d.cuMemsetD8Async(src, 0x5a, uint64(n), v.stream)); err != nil {
			return err
		}
		var ev [2]uintptr
		for i := range ev {
			if err := d.err("cuEventCreate", d.cuEventCreate(&ev[i], 0)); err != nil {
				return err
			}
			defer d.cuEventDestroy(ev[i])
		}
		for i := range warm + reps {
			timed := i >= warm
			if timed {
				if err := d.err("cuEventRecord", d.cuEventRecord(ev[0], v.stream)); err != nil {
					return err
				}
			}
			if err := d.err("cuMemcpyDtoDAsync", d.cuMemcpyDtoDAsync(dst, src, uint64(n), v.stream)); err != nil {
				return err
			}
			if !timed {
				continue
			}
			if err := d.err("cuEventRecord", d.cuEventRecord(ev[1], v.stream)); err != nil {
				return err
			}
			if err := d.err("cuEventSynchronize", d.cuEventSynchronize(ev[1])); err != nil {
				return err
			}
			var ms float32
			if err := d.err("cuEventElapsedTime", d.cuEventElapsedTime(&ms, ev[0], ev[1])); err != nil {
				return err
			}
			total += float64(ms) / 1e3
		}
		return d.err("cuStreamSynchronize", d.cuStreamSynchronize(v.stream))
	})
	if err != nil {
		return 0, err
	}
	if total <= 0 {
		return 0, errors.New("cuda: copy bandwidth: the copies took no measurable time")
	}
	return 2 * float64(n) / (total / float64(reps)), nil
}
