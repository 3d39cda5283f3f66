// Command f16fromq8 writes an f16 whisper.cpp model from a quantized one,
// for the CPU measurement (bench/cpu/run.sh): the kit's f16 file does not
// fit the device machine's transfer beside everything else, so an f16 file
// is made there from the kit's q8_0 file, with the kit f16's tensor types
// (whisper.Convert's f16 layout), and Hark and whisper.cpp both run it.
//
//	f16fromq8 IN.bin OUT.bin
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/whisper"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: f16fromq8 IN.bin OUT.bin")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "f16fromq8:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	src, err := ggmlbin.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	// Dequantize the quantized tensors to f32 in memory: Convert then
	// sees an f32 source and writes the f16 layout.
	for i := range src.Tensors {
		t := &src.Tensors[i]
		if t.Type == ggml.F32 || t.Type == ggml.F16 {
			continue
		}
		n := int64(1)
		for _, d := range t.Shape {
			n *= d
		}
		f := make([]float32, n)
		if err := ggml.Dequantize(t.Type, t.Data, f); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		b := make([]byte, 4*n)
		for j, v := range f {
			u := math.Float32bits(v)
			b[4*j], b[4*j+1], b[4*j+2], b[4*j+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
		t.Type, t.Data = ggml.F32, b
	}
	src.HParams.FType = 0
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := whisper.Convert(w, src, ggml.F16); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
