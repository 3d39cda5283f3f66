package cpu

//go:noescape
func q8BlockAVX2(x *float32, q *byte) (d float32, ok bool)

func init() {
	if hasAVX2 {
		q8Block = q8BlockAVX2
	}
}
