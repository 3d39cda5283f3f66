package shaders

// Tuning holds the chip-dependent knobs of the kernels and of the host.
// Values per GPU family are in Families, each with the reason it was
// chosen. Kernel authors add fields as they need them: give the field a
// value in Default and in every family (TestFamilies checks none is zero)
// and a line in withDefaults, so a zero still means "use the default".
type Tuning struct {
	Family string
	// SIMDWidth is the SIMD-group width (32 on every Apple GPU).
	SIMDWidth uint32
	// MaxThreads bounds threads per threadgroup (pipeline
	// maxTotalThreadsPerThreadgroup; 1024 on Apple GPUs).
	MaxThreads uint32
	// RowsPerSIMD is how many weight rows one SIMD-group of a
	// matrix-vector kernel reduces: more rows reuse the activation vector
	// from registers, fewer rows give more SIMD-groups to hide latency.
	RowsPerSIMD uint32
	// MatVecThreads is threads per threadgroup of matrix-vector kernels.
	MatVecThreads uint32
	// ChainLength is the number of decode steps encoded into one command
	// buffer by a chained decode (Exec.RunSeq).
	ChainLength uint32
	// KVSplit is the KV length each threadgroup of split-KV decode
	// attention handles before the merge.
	KVSplit uint32
}

// Default is the tuning used when the family is unknown (and by the MSL
// test executor).
var Default = Tuning{
	Family: "default", SIMDWidth: 32, MaxThreads: 1024,
	RowsPerSIMD: 4, MatVecThreads: 256, ChainLength: 64, KVSplit: 256,
}

// Families is the tuning per GPU family, most capable first; the Metal
// host picks the first family the device supports (supportsFamily:).
//
// None of these values has been measured on hardware yet (no Mac exists
// where Hark is built); each is reasoned from the chips' published
// structure and is to be replaced by hark bench measurements:
//
//   - Apple9 (M3, M4, A17 Pro): dynamic caching allocates registers and
//     threadgroup memory per use, so occupancy suffers less from register
//     pressure; 8 rows per SIMD-group halves the activation reloads of a
//     matrix-vector product. 128 chained tokens: the CPU-side cost per
//     command buffer is the same while the GPU step is shortest here.
//   - Apple8 (M2, A15/A16): the M1 structure with more bandwidth (100 GB/s
//     for M2); 4 rows per SIMD-group keeps enough SIMD-groups in flight to
//     saturate memory on 8-10 GPU cores; 64 chained tokens.
//   - Apple7 (M1, A14): 68 GB/s and a fixed register file; 4 rows per
//     SIMD-group and 256-thread threadgroups, the occupancy sweet spot
//     commonly reported for M1 matrix-vector kernels; 64 chained tokens.
//   - Mac2 (Intel Macs with AMD or Intel GPUs): SIMD width differs (AMD
//     wavefronts of 32/64, Intel 8-32), so kernels must read
//     threadExecutionWidth rather than assume 32; 2 rows per SIMD-group and
//     32 chained tokens because discrete GPUs reach shared (system) memory
//     over PCIe and a long chain holds the queue longer per check of stop
//     conditions.
//   - default: the Apple7 values, safe on every Apple GPU.
var Families = []Tuning{
	{Family: "apple9", SIMDWidth: 32, MaxThreads: 1024, RowsPerSIMD: 8, MatVecThreads: 256, ChainLength: 128, KVSplit: 512},
	{Family: "apple8", SIMDWidth: 32, MaxThreads: 1024, RowsPerSIMD: 4, MatVecThreads: 256, ChainLength: 64, KVSplit: 256},
	{Family: "apple7", SIMDWidth: 32, MaxThreads: 1024, RowsPerSIMD: 4, MatVecThreads: 256, ChainLength: 64, KVSplit: 256},
	{Family: "mac2", SIMDWidth: 32, MaxThreads: 1024, RowsPerSIMD: 2, MatVecThreads: 256, ChainLength: 32, KVSplit: 256},
}

// TuningFor returns the tuning of a family name ("apple9", ...; Default for
// an unknown name), with zero fields filled from Default.
func TuningFor(family string) Tuning {
	t := Default
	for _, f := range Families {
		if f.Family == family {
			t = f
			break
		}
	}
	return t.withDefaults()
}

func (t Tuning) withDefaults() Tuning {
	d := Default
	if t.SIMDWidth == 0 {
		t.SIMDWidth = d.SIMDWidth
	}
	if t.MaxThreads == 0 {
		t.MaxThreads = d.MaxThreads
	}
	if t.RowsPerSIMD == 0 {
		t.RowsPerSIMD = d.RowsPerSIMD
	}
	if t.MatVecThreads == 0 {
		t.MatVecThreads = d.MatVecThreads
	}
	if t.ChainLength == 0 {
		t.ChainLength = d.ChainLength
	}
	if t.KVSplit == 0 {
		t.KVSplit = d.KVSplit
	}
	return t
}
