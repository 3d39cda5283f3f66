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

	// Matrix kernels (launch_matrix.go). Zero means the default below.

	// MatVecRows is the number of weight rows one SIMD-group of mat_vec
	// computes (function constant 20, at most 4): each lane's activation
	// chunk is reused for that many rows, while more rows per SIMD-group
	// means fewer threadgroups to hide memory latency with. 4 keeps about
	// 110 registers per thread, under the 128 at which Apple GPUs halve
	// occupancy.
	MatVecRows uint32
	// MatVecBatch is the number of activation rows (m) one mat_vec
	// threadgroup multiplies against each weight row it reads (function
	// constant 21, at most 8). 8 covers a 5-beam Whisper decode in one pass
	// over the weights; m = 1 decode does not pay for it (the batch loop is
	// bounded by the rows present).
	MatVecBatch uint32
	// MatVecSIMDGroups is the number of SIMD-groups per mat_vec threadgroup
	// (at most 32). 2 (64 threads) gives the scheduler many small
	// threadgroups, which is what a bandwidth-bound kernel wants.
	MatVecSIMDGroups uint32
	// EmbedThreads is the threadgroup size of embed (a multiple of 32); one
	// threadgroup per token, each thread decoding 16 elements at a time.
	EmbedThreads uint32
}

// Defaults of the matrix kernels' knobs (see the fields of Tuning).
const (
	defMatVecRows       = 4
	defMatVecBatch      = 8
	defMatVecSIMDGroups = 2
	defEmbedThreads     = 128
)

// Default is the tuning used when the family is unknown (and by the MSL
// test executor).
var Default = Tuning{Family: "default", SIMDWidth: 32, MaxThreads: 1024,
	MatVecRows: defMatVecRows, MatVecBatch: defMatVecBatch, MatVecSIMDGroups: defMatVecSIMDGroups,
	EmbedThreads: defEmbedThreads}
