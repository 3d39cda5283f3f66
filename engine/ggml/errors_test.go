package ggml

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnsupportedTypesNamed(t *testing.T) {
	for _, typ := range []Type{IQ2_XXS, IQ2_XS, IQ3_XXS, IQ1_S, IQ3_S, IQ2_S, IQ4_XS, IQ1_M, TQ1_0, TQ2_0, MXFP4, I8, F64} {
		name := typ.String()
		n := typ.BlockSize() * 2
		b := make([]byte, typ.TypeSize()*2)
		require.ErrorContains(t, Dequantize(typ, b, make([]float32, n)), name)
		require.ErrorContains(t, Quantize(typ, make([]float32, n), b), name)
		_, err := VecDot(typ, n, b, b)
		require.ErrorContains(t, err, name)
		_, err = ActivationType(typ)
		require.ErrorContains(t, err, name)
		_, err = ActivationBytes(typ, n)
		require.ErrorContains(t, err, name)
		require.ErrorContains(t, QuantizeActivation(typ, make([]float32, n), b), name)
	}
	// Q8_1 and Q8_K are activation formats only: no weight dot product.
	_, err := VecDot(Q8_K, 256, make([]byte, 292), make([]byte, 292))
	require.ErrorContains(t, err, "q8_K")
	// Unknown ids are reported by number.
	require.ErrorContains(t, Dequantize(Type(99), nil, nil), "unknown type id 99")
	require.ErrorContains(t, Quantize(Type(31), nil, nil), "unknown type id 31")
	_, err = VecDot(Type(1000), 0, nil, nil)
	require.ErrorContains(t, err, "unknown type id 1000")
}

func TestLengthErrors(t *testing.T) {
	x := make([]float32, 256)
	for typ := range codecs {
		name := typ.String()
		need, err := RowBytes(typ, 256)
		require.NoError(t, err)
		b := make([]byte, need+1)
		require.Error(t, Dequantize(typ, b, x), name)          // too long
		require.Error(t, Dequantize(typ, b[:need-1], x), name) // too short
		require.Error(t, Quantize(typ, x, b), name)            // too long
		require.Error(t, Quantize(typ, x, b[:need-1]), name)   // too short
		require.NoError(t, Quantize(typ, x, b[:need]), name)   // exact
		require.NoError(t, Dequantize(typ, b[:need], x), name) // exact
		require.NoError(t, Dequantize(typ, nil, nil), name)    // empty
		if bs := typ.BlockSize(); bs > 1 {
			err := Dequantize(typ, b[:need], make([]float32, 256-bs/2))
			require.ErrorContains(t, err, "multiple", name)
		}
	}
	for typ := range vecDots {
		name := typ.String()
		w := make([]byte, typ.TypeSize()*256/typ.BlockSize())
		na, err := ActivationBytes(typ, 256)
		require.NoError(t, err)
		a := make([]byte, na)
		_, err = VecDot(typ, 256, w, a)
		require.NoError(t, err, name)
		_, err = VecDot(typ, 256, w[1:], a)
		require.Error(t, err, name)
		_, err = VecDot(typ, 256, w, a[1:])
		require.ErrorContains(t, err, "activation", name)
		_, err = VecDot(typ, -256, w, a)
		require.Error(t, err, name)
		_, err = VecDot(typ, 512, w, a)
		require.Error(t, err, name)
		require.Error(t, QuantizeActivation(typ, x, a[:na-1]), name)
	}
}
