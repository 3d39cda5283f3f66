package main

import (
	"path/filepath"
	"strings"

	"github.com/harkapp/hark/cuda/ptxstore"
)

// Module is a per-architecture PTX module of native CUDA kernels (written
// in CUDA C++ under cuda/native, not translated from Metal): kernels that
// need instructions the base module's sm_75 / PTX 6.4 target lacks
// (mma.sync m16n8k16 with f32 accumulation, cp.async, ldmatrix: sm_80 and
// PTX 7.0; wgmma: sm_90a and PTX 8.0). The loader (cuda/modules.go) loads it beside the base module
// on GPUs of at least its compute capability.
//
// The base module stays clang 14's sm_75 output: clang 19 would change
// every byte of the 9 MB of PTX the GPU tests validated, and an sm_75
// GPU runs nothing else.
type Module struct {
	Name    string // cuda/kernels_<Name>.ptx.xz
	Arch    string // --cuda-gpu-arch
	ISA     string // PTX ISA target feature
	Clang   string // the compiler, from Debian ($HARK_CLANG19 overrides)
	Sources []string
}

// File is the module's stored PTX in the cuda package (ptxstore).
func (m Module) File() string { return "kernels_" + m.Name + ptxstore.Ext }

// Modules are the native modules, oldest architecture first.
var Modules = []Module{
	{Name: "sm80", Arch: "sm_80", ISA: "ptx70", Clang: "clang-19", Sources: []string{"native/mat_mul_mma.cu", "native/mat_mul_big.cu", "native/attention_mma.cu", "native/mat_mul_mmq.cu", "native/mat_vec_rows.cu"}},
	// wgmma (warpgroup products) needs the architecture-specific sm_90a
	// target: its PTX runs on compute capability 9.0 only.
	{Name: "sm90a", Arch: "sm_90a", ISA: "ptx80", Clang: "clang-19", Sources: []string{"native/mat_mul_wgmma.cu"}},
}

// CompileNative compiles m's sources into one PTX module. The sources are
// concatenated through #include lines of one unit, so every kernel of the
// module is in one file the driver loads.
func CompileNative(root string, m Module) ([]byte, error) {
	cc, err := findClang("HARK_CLANG19", m.Clang)
	if err != nil {
		return nil, err
	}
	flags := make([]string, 0, len(clangFlags)+2)
	for _, f := range clangFlags {
		f = strings.Replace(f, "--cuda-gpu-arch="+Arch, "--cuda-gpu-arch="+m.Arch, 1)
		if f == "+"+ISA {
			f = "+" + m.ISA
		}
		flags = append(flags, f)
	}
	flags = append(flags, "-I", filepath.Join(root, "cuda", "native"), "-I", filepath.Join(root, "shaders"))
	var unit strings.Builder
	for _, s := range m.Sources {
		unit.WriteString("#include \"" + filepath.Base(s) + "\"\n")
	}
	return compileUnit(root, cc, flags, unit.String())
}

// writeNative stores every native module's PTX in dir.
func writeNative(dir string) error {
	for _, m := range Modules {
		b, err := CompileNative(repoRoot(), m)
		if err != nil {
			return err
		}
		if err := ptxstore.Write(filepath.Join(dir, m.File()), b); err != nil {
			return err
		}
	}
	return nil
}
