package cpu

//go:noescape
func scanGEAVX2(x *float32, n int, thr float32) (off int, mask uint32)

func init() {
	if hasAVX2 {
		scanGE = func(x []float32, thr float32) (int, uint32) {
			if len(x) == 0 {
				return 0, 0
			}
			return scanGEAVX2(&x[0], len(x), thr)
		}
	}
}
