package cpu

// scanGE finds the first 32-element block of x (len(x) a multiple of 32)
// holding an element >= thr (never a NaN): its offset and the mask of
// those elements (bit i for x[off+i]), or (len(x), 0). It is the
// sampler's candidate scan, which an assembly version replaces where the
// CPU has one.
var scanGE = scanGEGeneric

func scanGEGeneric(x []float32, thr float32) (int, uint32) {
	for off := 0; off+32 <= len(x); off += 32 {
		var mask uint32
		for i, v := range x[off : off+32] {
			if v >= thr {
				mask |= 1 << i
			}
		}
		if mask != 0 {
			return off, mask
		}
	}
	return len(x), 0
}
