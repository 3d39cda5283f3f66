package plan

import "testing"

// The VMAXPS path against the builtin's loop and the float64 reference,
// forced on and off.
func TestMaxF32AVX(t *testing.T) {
	if !useMaxAVX {
		t.Fatal("this CPU lacks AVX: maxF32x32 cannot be checked here")
	}
	t.Cleanup(func() { useMaxAVX = true })
	for _, on := range []bool{true, false} {
		useMaxAVX = on
		for i, s := range maxRows() {
			got, want := MaxF32(s), maxF32Go(s)
			if !sameF32(got, want) || !sameF32(got, maxRef64(s)) {
				t.Fatalf("AVX %v, row %d (n %d): MaxF32 %v, builtin loop %v, float64 reference %v", on, i, len(s), got, want, maxRef64(s))
			}
		}
	}
}
