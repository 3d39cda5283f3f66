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
	// Norm, RoPE, attention, argmax and sampler knobs (launch_norm.go,
	// launch_attention.go, launch_sample.go).

	// NormThreads is the threadgroup size of RMSNorm/LayerNorm (one
	// threadgroup per row): 256 keeps 4 elements per thread at dim 1024
	// and 8 groups in flight per core; smaller rows get fewer threads.
	NormThreads uint32
	// RopeThreads bounds the threads per (row, head) of RoPE: one thread
	// per rotated pair, so 64 covers head dims up to 128 in one pass.
	RopeThreads uint32
	// AttnRows is the query rows (one SIMD-group each) per attention
	// threadgroup: rows of one head in one group share K/V reads through
	// the cache (attention_tiled: through shared K/V tiles); 4 (128
	// threads) leaves room for several groups per core. attention_mma's
	// shape is fixed by its threadgroup arrays (2 SIMD-groups of 8 rows).
	AttnRows uint32
	// AttnChunk is the keys per threadgroup when decode attention is split
	// over the KV length: 256 keys is 8 lane-rounds, enough work to hide
	// the partial write, and gives 16 chunks at 4K context.
	AttnChunk uint32
	// AttnSplitBelow: attention with fewer (row, head) pairs than this is
	// split over the KV length (decode, beams); more already fill the GPU
	// (an M1's 8 cores hold 8+ groups each).
	AttnSplitBelow uint32
	// ArgmaxSegment is the elements per first-stage argmax threadgroup:
	// 4096 gives 8 partial groups for a 32K vocabulary, 38 for 152K.
	ArgmaxSegment uint32
	// ArgmaxThreads is the threadgroup size of both argmax stages.
	ArgmaxThreads uint32
	// SampleThreads is the sampler's single threadgroup: the largest a
	// pipeline allows (1024), since the sampler is one group.
	SampleThreads uint32
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
	EmbedThreads: defEmbedThreads,
	NormThreads:  256, RopeThreads: 64, AttnRows: 4, AttnChunk: 256, AttnSplitBelow: 256,
	ArgmaxSegment: 4096, ArgmaxThreads: 256, SampleThreads: 1024}
