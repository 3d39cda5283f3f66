package shaders

// Tuning holds the chip-dependent knobs of the kernels. Values per GPU
// family are in Families, each with the reason it was chosen.
type Tuning struct {
	Family string
	// SIMDWidth is the SIMD-group width (32 on every Apple GPU).
	SIMDWidth uint32
	// MaxThreads bounds threads per threadgroup (pipeline
	// maxTotalThreadsPerThreadgroup; 1024 on Apple GPUs).
	MaxThreads uint32
}

// Default is the tuning used when the family is unknown (and by the MSL
// test executor).
var Default = Tuning{Family: "default", SIMDWidth: 32, MaxThreads: 1024}
