package ggml

import "encoding/binary"

// Dot products of the 32-element formats with Q8_0/Q8_1 activations. Each
// block's integer sum is exact; the float combination mirrors ggml's
// operation order so that results match to the last bit or two.

func dotQ4_0(n int, w, act []byte) float32 {
	var sum float32
	for ; n > 0; n, w, act = n-QK4_0, w[BlockQ4_0Bytes:], act[BlockQ8_0Bytes:] {
		qs, q8 := w[2:18], act[2:34]
		var si int32
		for j := range 16 {
			si += (int32(qs[j]&0xf) - 8) * int32(int8(q8[j]))
			si += (int32(qs[j]>>4) - 8) * int32(int8(q8[j+16]))
		}
		sum += float32(float32(float32(si)*half(w)) * half(act))
	}
	return sum
}

func dotQ4_1(n int, w, act []byte) float32 {
	var sum float32
	for ; n > 0; n, w, act = n-QK4_1, w[BlockQ4_1Bytes:], act[BlockQ8_1Bytes:] {
		qs, q8 := w[4:20], act[4:36]
		var si int32
		for j := range 16 {
			si += int32(qs[j]&0xf) * int32(int8(q8[j]))
			si += int32(qs[j]>>4) * int32(int8(q8[j+16]))
		}
		// ggml: d_w*d_a*Σ(code·q) + m_w*s_a, with s_a the activation's stored sum.
		sum += float32(float32(half(w)*half(act))*float32(si)) + float32(half(w[2:])*half(act[2:]))
	}
	return sum
}

func dotQ5_0(n int, w, act []byte) float32 {
	var sum float32
	var c [32]int32
	for ; n > 0; n, w, act = n-QK5_0, w[BlockQ5_0Bytes:], act[BlockQ8_0Bytes:] {
		q5Codes(binary.LittleEndian.Uint32(w[2:]), w[6:22], &c)
		q8 := act[2:34]
		var si int32
		for j := range 32 {
			si += (c[j] - 16) * int32(int8(q8[j]))
		}
		sum += float32(float32(half(w)*half(act)) * float32(si))
	}
	return sum
}

func dotQ5_1(n int, w, act []byte) float32 {
	var sum float32
	var c [32]int32
	for ; n > 0; n, w, act = n-QK5_1, w[BlockQ5_1Bytes:], act[BlockQ8_1Bytes:] {
		q5Codes(binary.LittleEndian.Uint32(w[4:]), w[8:24], &c)
		q8 := act[4:36]
		var si int32
		for j := range 32 {
			si += c[j] * int32(int8(q8[j]))
		}
		sum += float32(float32(half(w)*half(act))*float32(si)) + float32(half(w[2:])*half(act[2:]))
	}
	return sum
}

func dotQ8_0(n int, w, act []byte) float32 {
	var sum float32
	for ; n > 0; n, w, act = n-QK8_0, w[BlockQ8_0Bytes:], act[BlockQ8_0Bytes:] {
		var si int32
		for j := range 32 {
			si += int32(int8(w[2+j])) * int32(int8(act[2+j]))
		}
		sum += float32(float32(si) * float32(half(w)*half(act)))
	}
	return sum
}

func dotIQ4NL(n int, w, act []byte) float32 {
	var sum float32
	for ; n > 0; n, w, act = n-QK4_NL, w[BlockIQ4NLBytes:], act[BlockQ8_0Bytes:] {
		d := half(act) * half(w)
		qs, q8 := w[2:18], act[2:34]
		var si int32
		for j := range 16 {
			si += int32(int8(q8[j])) * int32(KValuesIQ4NL[qs[j]&0xf])
			si += int32(int8(q8[j+16])) * int32(KValuesIQ4NL[qs[j]>>4])
		}
		sum += float32(d * float32(si))
	}
	return sum
}
