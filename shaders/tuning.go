package shaders

// Tuning holds the chip-dependent knobs of the kernels and of the host.
// Values per GPU family are in Families, each with the reason it was
// chosen. A zero field means the default (Default's value), so a family
// only states what it changes.
type Tuning struct {
	Family string
	// SIMDWidth is the SIMD-group width (32 on every Apple GPU).
	SIMDWidth uint32
	// MaxThreads bounds threads per threadgroup (pipeline
	// maxTotalThreadsPerThreadgroup; 1024 on Apple GPUs).
	MaxThreads uint32
	// ChainLength is the number of steps encoded into one command buffer
	// by a chained decode (metal Exec.RunSteps; engine/llm's decode chain).
	ChainLength uint32

	// Matrix kernels (launch_matrix.go). Zero means the default below.

	// MatVecRows is the number of weight rows one SIMD-group of mat_vec
	// computes (function constant 20, at most 4): each lane's activation
	// chunk is reused for that many rows, while more rows per SIMD-group
	// means fewer threadgroups to hide memory latency with. 4 keeps about
	// 110 registers per thread, under the 128 at which Apple GPUs halve
	// occupancy.
	MatVecRows uint32
	// MatVecRowsWide replaces MatVecRows for products at least
	// MatVecWideK (2048) wide: a long row gives each warp's x loads more
	// weight rows to serve. A family that leaves it zero gets its own
	// MatVecRows (one value for every width).
	MatVecRowsWide uint32
	// MatVecBatch is the number of activation rows (m) one mat_vec
	// threadgroup multiplies against each weight row it reads (function
	// constant 21, at most 8). 8 covers a 5-beam Whisper decode in one pass
	// over the weights; m = 1 decode does not pay for it (the batch loop is
	// bounded by the rows present).
	MatVecBatch uint32
	// MatVecBatchMany, where smaller, replaces MatVecBatch for products of
	// more than MatVecBatch rows (the batch plan's steps of 9-16 sequences
	// on the mat-vec path): more threadgroups over the same weight rows,
	// fewer rows each, where one pass over the weights no longer fits one
	// threadgroup anyway. cuda: 4 (H200, SmolLM2-shape q8_0, 16 rows: a
	// step of 3.50 ms against 3.87-3.93 at 8, 3.56 at 2; BENCHMARKS.md,
	// grid38); a Whisper 5-beam decode keeps MatVecBatch's one pass.
	MatVecBatchMany uint32
	// MatVecSIMDGroups is the number of SIMD-groups per mat_vec threadgroup
	// (at most 32). 2 (64 threads) gives the scheduler many small
	// threadgroups, which is what a bandwidth-bound kernel wants.
	MatVecSIMDGroups uint32
	// MatVecQ8K is the product width from which the
	// mat-vecs of q8_0 and q4_0 weights with one activation row (decode)
	// launch the 8-bit-activation instances (matvec_q8.metal: x' quantized
	// once per threadgroup as ggml's q8_0, integer dot products), up to
	// MatVecQ8MaxK wide with 16-byte aligned activations. Their result is
	// the CPU backend's 8-bit-activation product, not the float one. Only
	// the cuda family sets it (issue #34); the others keep MatVecQ8Off
	// (HARK_CUDA_TUNE=MatVecQ8K=1000000,MatVecQ8KQ8_0=1000000 turns it off
	// on CUDA too).
	MatVecQ8K uint32
	// MatVecQ8KQ8_0 is MatVecQ8K for q8_0 weights (0 in a family: the
	// same). The cuda family kept q8_0 on float activations while each
	// threadgroup quantized x for its 8 rows alone (the 1B shape's tg128
	// 3-5% slower, bench/cuda/20261130-s15/z1-output.log); with the grid
	// capped (MatVecQ8Groups) q8_0 takes them too (the 1B shape's tg128
	// +35-41%, bench/cuda/20261201-b1x34).
	MatVecQ8KQ8_0 uint32
	// MatVecQ8Rows and MatVecQ8SIMDGroups are those instances' weight rows
	// per SIMD-group (at most 4) and SIMD-groups per threadgroup (at most
	// 8): each threadgroup quantizes the whole activation row first, so
	// more rows per threadgroup quantize less often, fewer spread a
	// narrow product over more multiprocessors.
	MatVecQ8Rows       uint32
	MatVecQ8SIMDGroups uint32
	// MatVecQ8Groups caps those instances' threadgroups at this many a
	// core where Cores is known: each threadgroup then takes row sets
	// across the grid, quantizing the activation row once for all of them
	// (the cap keeps every threadgroup resident, so none waits for a
	// second wave). Default's value caps nothing. The cuda family: 2 (an
	// H200, the 1B shape's tg128 q8_0 / q4_0 at 4 warps of 2 rows: 872 /
	// 906 tok/s at 2, 802 / 890 at 4, 744 / 848 at 8, 633 / 769 uncapped;
	// bench/cuda/20261201-b1x34/call2-timed.log).
	MatVecQ8Groups uint32
	// MatVecQ8RowsLong, MatVecQ8SIMDGroupsLong and MatVecQ8GroupsLong are
	// MatVecQ8Rows, MatVecQ8SIMDGroups and MatVecQ8Groups for the products
	// at least MatVecQ8LongK wide (0 in a family: the same): there the
	// quantization of x' is most of a threadgroup's instructions, so
	// fewer, larger threadgroups quantize less in all. The cuda family: 8
	// SIMD-groups, 1 threadgroup a core (an H200, the 1B shape's down
	// product, 8192 wide, 2048 rows: issue-bound at 2 threadgroups of 4
	// warps a core in Nsight Compute, 21.8 µs; 16.5 µs so; tg128 q8_0
	// +6-10%, q4_0 +5-13%, bench/cuda/20261202-g34).
	MatVecQ8RowsLong       uint32
	MatVecQ8SIMDGroupsLong uint32
	MatVecQ8GroupsLong     uint32
	// MatVecQ8GroupsPre is MatVecQ8Groups for the products that take the
	// pre-pass (MatVecQ8PreK: mat_vec_q8p, 127 registers a thread against
	// the in-kernel quantization's 199, so twice as many threadgroups fit
	// a core) narrower than MatVecQ8LongK (0 in a family: MatVecQ8Groups;
	// the long ones keep MatVecQ8GroupsLong, the in-kernel ones such as
	// the folded output product MatVecQ8Groups). The cuda family: 4, four
	// threadgroups of 4 warps a multiprocessor (an H200, the 1B shape's
	// tg128 q8_0 / q4_0 with PDL: 1,107 / 1,245 tok/s at 2, 1,150 / 1,319
	// at 4, 1,142 / 1,306 at 3, 1,092 / 1,226 uncapped, the means of 4
	// alternated rounds; gate|up 16.5 → 14.8 µs in Nsight Compute;
	// bench/cuda/20261203-q34s28).
	MatVecQ8GroupsPre uint32
	// MatVecQ8PreK is the product width from which those instances take
	// x' quantized once, by a pre-pass launch (quantize_q8x's forms into
	// the dispatch's scratch), instead of in every threadgroup
	// (mat_vec_q8p; matvec_q8.metal, "The pre-quantized path"); the same
	// codes and scales, so the same result but for RMSNorm's Σx² summed
	// in another order. Default: MatVecQ8Off (never). The cuda family:
	// 2048, every such product (an H200, the 1B shape's tg128 q8_0 / q4_0
	// +8% / +14% against the in-kernel quantization, the pre-pass at
	// 4096, the down product alone, +5% / +10%; bench/cuda/20261202-q34).
	MatVecQ8PreK uint32
	// MatVecRowsNative, when 2 or more, is the most activation rows (m)
	// from 2 up a plain q8_0 mat-vec (no GELU-out flag, 16-byte aligned
	// activations, less than MatVecWideK wide) runs as the native
	// mat_vec_rows_q8_0 (cuda/native/mat_vec_rows.cu: each warp decodes
	// its weight chunks once for all its threadgroup's rows) instead of
	// mat_vec_impl. Zero (or 1): never. Only the CUDA host sets it, with
	// the sm_80 module (MatVecRowsNativeRows); HARK_CUDA_TUNE=MatVecRowsNative=1
	// turns it off there.
	MatVecRowsNative uint32
	// MatVecRowsNativeBatch is those products' activation rows a block:
	// 4 (below 8, and where zero) or 8. Not yet measured on a GPU: 4 is
	// what mat_vec_impl measured best at 16 rows (MatVecBatchMany) and
	// paged38's multi-row mat-vecs too (BENCHMARKS.md).
	MatVecRowsNativeBatch uint32
	// MatVecRowsMMA, when 2 or more, is the activation rows from which
	// those products (the ones MatVecRowsNative takes) run on tensor
	// cores instead: mat_vec_rows_mma_q8_0 (cuda/native/mat_vec_rows.cu),
	// one m16n8k16 product over up to 16 rows, the weights read once at
	// any m. Zero (or 1): never. Only the CUDA host sets it
	// (MatVecRowsMMARows, with the sm_80 module); HARK_CUDA_TUNE=
	// MatVecRowsMMA=1 turns it off there.
	MatVecRowsMMA uint32
	// MatVecRowsMMAMax, past 16, is the most activation rows the
	// tensor-core form takes (a column of 16 rows a block past 16: a batch
	// step's prompt rows beside running streams, issue #38); the native
	// products stop at MatVecRowsNative rows otherwise. Zero (or up to
	// 16): 16. Only the CUDA host sets it (MatVecRowsMMAMaxRows, with the
	// sm_80 module); HARK_CUDA_TUNE=MatVecRowsMMAMax=16 turns it off there.
	MatVecRowsMMAMax uint32
	// MatMulMMA, when not zero, is the rows (m) from which mat_mul of a
	// weight type with a tensor-core variant launches mat_mul_mma_<type>
	// (native CUDA, cuda/native; the same grid and blocking as mat_mul)
	// instead of mat_mul_<type>, and conv1d of that many output steps
	// conv1d_mma_<type> (the same kernel over the im2col view) instead of
	// conv1d_<type>. Zero: never. Only the CUDA host sets it,
	// and only when its GPU loaded the sm_80 module (no Metal family or
	// the executor has those functions).
	MatMulMMA uint32
	// MatMulBig, when not zero, is the number of 128×128 output tiles
	// from which mat_mul of f16 weights (m from MatMulMMA, or
	// MatMulMMARows) launches mat_mul_big_f16 (cuda/native/mat_mul_big.cu:
	// 256 threads a tile, cp.async and ldmatrix) on that tile's grid
	// instead of mat_mul_mma_f16's 32×64 tiles: below it the large tiles
	// leave multiprocessors idle. Where MatMulMMA says no native module is
	// loaded, the same launch names its MSL twin of the same blocking,
	// mat_mul_t128_f16 (matmul_t128.metal; likewise for MatMulBigHalf and
	// MatMulWGMMA below), as MatMulMMQ's. Only the CUDA host sets it, with
	// MatMulMMA; the tests set it in the executor.
	MatMulBig uint32
	// MatMulBigHalf, when not zero, makes those products launch
	// mat_mul_big_f16_h (twin: mat_mul_t128_f16_h), which rounds each activation to f16 once (as
	// cuBLAS's and llama.cpp's f16 GEMMs do: half the tensor-core work, an
	// error of ~2^-12 of Σ|w·x|) where mat_mul_big_f16 keeps float
	// accuracy by splitting it in two f16 parts. Off by default: the
	// float-activation references hold mat_mul to 2e-5. For measuring.
	MatMulBigHalf uint32
	// MatMulWGMMA, when not zero, is the number of 128×128 output tiles
	// from which the products MatMulBig picks launch mat_mul_wgmma_f16
	// (cuda/native/mat_mul_wgmma.cu: Hopper's warpgroup products, the
	// same tiles; twin: mat_mul_t128_wg_f16) instead of mat_mul_big_f16: it rounds each activation
	// to f16 once, as MatMulBigHalf does (cuda/README.md says why that is
	// the large-tile path's precision). Only the CUDA host sets it (to
	// 1), when its GPU loaded the sm_90a module.
	MatMulWGMMA uint32
	// MatMulMMQ, when not zero, is the rows (m) from which mat_mul of
	// q8_0, q4_0 and q5_0 weights takes 8-bit activations, as the CPU's
	// quantized GEMM and llama.cpp's MMQ do: quantize_q8a quantizes x
	// into the dispatch's scratch once, then mat_mul_mmq_<type> (int8
	// tensor cores, cuda/native/mat_mul_mmq.cu) multiplies the codes where
	// MatMulMMA says the native kernels are loaded, else its MSL twin
	// mat_mul_q8a_<type> (matmul_q8a.metal) does. It takes precedence over
	// MatMulMMA for those types; its reference is the CPU's quantized GEMM
	// (cpu.Options.QuantGEMM), not the float-activation CPU. Zero: never.
	// Only the CUDA host sets it (MatMulMMQRows), with the sm_80 module.
	MatMulMMQ uint32
	// AttnMMA, when not zero, makes unsplit attention over rows of one
	// sequence with head sizes that are multiples of 8 up to 128 and no
	// probs launch attention_mma_tc_* (native CUDA on tensor cores,
	// cuda/native/attention_mma.cu; attention_mma's key tiles and online
	// softmax per row) instead of attention_mma or attention_tiled; where
	// MatMulMMA says no native module is loaded, their MSL twins of the
	// same blocking, attention_mma16_* (attention_mma16.metal). Only the
	// CUDA host sets it, with the sm_80 module loaded, as MatMulMMA; the
	// tests set it in the executor.
	AttnMMA uint32
	// EmbedThreads is the threadgroup size of embed (a multiple of 32); one
	// threadgroup per token, each thread decoding 16 elements at a time.
	EmbedThreads uint32
	// Repack is RepackRows (2) where the host uploads q8_0 and q4_0 weights
	// in the repacked layout (repack.go: 16-byte quant loads, the cuda
	// family); 1, the default, keeps the file's layout.
	Repack uint32
	// Align16 is Aligned16 (2) where the host promises every buffer
	// starts 16-byte aligned (the CUDA host: one cuMemAlloc each; the
	// executor's buffers are, and under that tuning it aligns its weight
	// copies), so the mat-vecs load what the bindings' offsets and strides
	// keep aligned 16 bytes at a time: f16 rows (the "_a16" instances, two
	// loads a chunk instead of 16 halves) and the activations (function
	// constant 22, four a chunk instead of 16 floats); 1, the default,
	// promises element alignment only.
	Align16 uint32
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
	// AttnSplitGroups caps the split from the GPU's size: at most enough
	// chunks for Cores·AttnSplitGroups threadgroups, so a long cache gets
	// longer chunks instead of more partials for attention_merge to
	// combine (its work grows with the chunk count, on every thread).
	// Default's value caps nothing, nor does any where Cores is unknown.
	AttnSplitGroups uint32
	// AttnMaxChunks caps the split's chunks per (row, head), whatever the
	// GPU's size: attention_merge combines that many partials on every
	// thread. Default's value caps nothing (attnMaxKV/32 chunks).
	AttnMaxChunks uint32
	// Cores is the GPU's core count (CUDA: multiprocessors), set by the
	// backend from the device, not by a family (the one knob without a
	// default); zero where unknown.
	Cores uint32
	// AttnGroupKeys is the longest f16 cache whose decode split (more than
	// one chunk, no probs) runs as attention_group: the chunks of a (row, head)
	// as the SIMD-groups of one threadgroup, merged in it, instead of a
	// threadgroup per chunk and an attention_merge launch. 1, the default,
	// never (a split has more than 32 keys).
	AttnGroupKeys uint32
	// AttnTicket is TicketMerge where the host binds the ticket buffer
	// (shaders.TicketIndex): a split decode attention outside
	// attention_group then runs as one launch whose last chunk to finish a
	// (row, head) merges its partials (attention_ticket_*,
	// rope_attention_ticket_*), not as the split and an attention_merge
	// launch. 1, the default, keeps the merge launch (the Metal host binds
	// no ticket buffer yet).
	AttnTicket uint32
	// AttnFoldO is FoldO where the host binds the ticket buffer and the
	// fold is proven (the cuda family): decode's RopeAttentionMatVec then
	// runs as one launch where the attention alone is one threadgroup a
	// head (rope_attention_mat_vec_*: each head's threadgroup multiplies its
	// outputs by its columns of Wo, the last to finish sums the partials in
	// head order), not as the attention's launches and the output product's
	// (issue #34 round 11: 4 launches a layer, not 5). 1, the default,
	// keeps the two. Round 11's fold, one threadgroup a head, cost 8% of
	// the SmolLM2 shape's tg128 on an H200 and 15% of the 1B shape's (the
	// output product on 9 or 32 multiprocessors, the last head summing
	// every row; bench/cuda/20261130-s15); the cuda family takes it with
	// AttnFoldSlices' slices (bench/cuda/20261201-launch34).
	AttnFoldO uint32
	// AttnFoldSlices is the slices of Wo's rows a folded launch spreads the
	// output product over (issue #34, seventeenth session): a threadgroup
	// per (slice, head), each running its head's attention (the slices
	// repeat it: a short cache's is cheap) and its slice's rows of the
	// head's partial, the last head of a slice summing that slice's rows.
	// 1, the default, is round 11's one threadgroup a head.
	AttnFoldSlices uint32
	// AttnPagedSIMDGroups is the SIMD-groups of attention_paged's
	// threadgroup (one per (head, row) of a batched step; at most 8): each
	// walks every n-th 32-key tile of the row's cache, so the chain of
	// dependent loads one SIMD-group walks is n times shorter; 1 is one
	// SIMD-group walking every tile.
	AttnPagedSIMDGroups uint32
	// AttnPagedChunk is the keys of a chunk of attention_paged's split over
	// a row's keys (issue #38): a row as deep as its table gets a
	// threadgroup per AttnPagedChunk keys, shorter rows as many as their
	// keys fill (the kernel counts them from the row's position), merged by
	// the last to finish (a ticket; hosts that bind no ticket buffer keep
	// one threadgroup a row). The kernel's chunk is the table's keys over
	// the grid's chunks, rounded up to 32: from about half AttnPagedChunk
	// (short tables) to all of it, more where AttnPagedSplitGroups cuts
	// the chunks. 512 keeps a decode row of up to 256 keys (at a context
	// of 8,192, 512) in one threadgroup, its SIMD-groups one or two tiles
	// each, while a prompt chunk's rows 4,000 keys deep spread over 7-8
	// threadgroups each rather than walking 16 tiles a SIMD-group on a few
	// multiprocessors (BENCHMARKS.md, stall38: ~11 ms a step for such a row).
	// The cuda family turns it off (PagedSplitOff): on the H200 the split's
	// grid, sized for the table, cost 16 decode streams 7% (2,543-2,731
	// against 2,774-2,927 tok/s) and gains only where a step carries a few
	// deep prompt rows, which the server's full prompt budget never does.
	// The cuda executor turns it on (512) for the steps whose deepest row
	// reads more keys than that (cuda's Options.NoDeepSplit): a long
	// prompt's rows beside streams, 4 rows at ~3,970 keys 6.28 -> 3.79 ms
	// a step on the H200 (BENCHMARKS.md, b38s27).
	AttnPagedChunk uint32
	// AttnPagedSplitGroups caps that split from the GPU's size: at most
	// Cores·AttnPagedSplitGroups threadgroups in the grid (a row's chunks
	// past its keys return at once, but each is launched), so a step of
	// many rows, which fills the GPU unsplit, keeps fewer chunks a row.
	AttnPagedSplitGroups uint32
	// AttnPagedValues is PagedValuesBatched (2) for attention_paged to take
	// a tile's value rows in batches of 8 keys, every load of a batch
	// before its first product and no branch per dim slot (paged_values,
	// as decode attention's attn_values); 1, the default, keeps the loop
	// key by key. The same sums in the same order either way. The cuda
	// family batches: on the H200 (BENCHMARKS, eighteenth session's final
	// check) the batch step took 1.45 / 2.63 / 4.50 ms at 1 / 4 / 16 rows
	// against 1.81 / 2.81 / 4.85 key by key.
	AttnPagedValues uint32
	// AttnSplitBelow: attention with fewer (row, head) pairs than this is
	// split over the KV length (decode, beams); more already fill the GPU
	// (an M1's 8 cores hold 8+ groups each).
	AttnSplitBelow uint32
	// ArgmaxSegment is the elements per first-stage argmax threadgroup:
	// 4096 gives 8 partial groups for a 32K vocabulary, 38 for 152K.
	ArgmaxSegment uint32
	// ArgmaxThreads is the threadgroup size of both argmax stages.
	ArgmaxThreads uint32
	// SampleThreads is the threadgroup of the sampler's second launch
	// (sample), whose last group to finish walks: the largest a pipeline
	// allows (1024).
	SampleThreads uint32
	// SampleSegment is the tokens per threadgroup of the sampler's passes
	// over the vocabulary (sample_scale, sample): 2048 gives 24 groups
	// for a 49K vocabulary, 75 for 152K (the last then sums each group's
	// histogram).
	SampleSegment uint32
	// SampleSegmentThreads is the threadgroup size of sample_scale.
	SampleSegmentThreads uint32
	// WhisperSegment is the logits per threadgroup of whisper_filter and
	// whisper_track (a greedy Whisper step's selection): 2048 gives 26
	// groups for Whisper's 51,864 tokens; WhisperOneSegment one a row.
	WhisperSegment uint32
	// WhisperThreads is the threadgroup size of whisper_filter and
	// whisper_track.
	WhisperThreads uint32
}

// Defaults of the matrix kernels' knobs (see the fields of Tuning).
const (
	defMatVecRows       = 4
	defMatVecBatch      = 8
	defMatVecSIMDGroups = 2
	defEmbedThreads     = 128
)

// MatVecQ8Off is a MatVecQ8K above every product the 8-bit-activation
// mat-vecs take: never.
const MatVecQ8Off = 1 << 30

// Default is the tuning used when the family is unknown (and by the MSL
// test executor).
var Default = Tuning{Family: "default", SIMDWidth: 32, MaxThreads: 1024, ChainLength: 64,
	MatVecRows: defMatVecRows, MatVecRowsWide: defMatVecRows, MatVecBatch: defMatVecBatch, MatVecBatchMany: defMatVecBatch, MatVecSIMDGroups: defMatVecSIMDGroups,
	MatVecQ8K: MatVecQ8Off, MatVecQ8KQ8_0: MatVecQ8Off, MatVecQ8Rows: defMatVecQ8Rows, MatVecQ8SIMDGroups: defMatVecQ8SIMDGroups,
	MatVecQ8Groups: 1 << 16, MatVecQ8RowsLong: defMatVecQ8Rows, MatVecQ8SIMDGroupsLong: defMatVecQ8SIMDGroups, MatVecQ8GroupsLong: 1 << 16,
	MatVecQ8GroupsPre: 1 << 16, MatVecQ8PreK: MatVecQ8Off,
	EmbedThreads: defEmbedThreads, Repack: 1, Align16: 1,
	NormThreads: 256, RopeThreads: 64, AttnRows: 4, AttnChunk: 256, AttnSplitBelow: 256,
	AttnSplitGroups: 1 << 16, AttnMaxChunks: 1 << 17, AttnGroupKeys: 1, AttnTicket: 1, AttnFoldO: 1, AttnFoldSlices: 1, AttnPagedSIMDGroups: 8,
	AttnPagedChunk: 512, AttnPagedSplitGroups: 16, AttnPagedValues: 1,
	ArgmaxSegment: 4096, ArgmaxThreads: 256, SampleThreads: 1024,
	SampleSegment: 2048, SampleSegmentThreads: 256, WhisperSegment: 2048, WhisperThreads: 256}

// Families is the tuning per GPU family, most capable first; the Metal
// host picks the first family the device supports (supportsFamily:).
// Fields left zero take Default's value.
//
// None of these values has been measured on hardware yet (no Mac exists
// where Hark is built); each is reasoned from the chips' published
// structure and is to be replaced by hark bench measurements:
//
//   - Apple9 (M3, M4, A17 Pro): dynamic caching allocates registers and
//     threadgroup memory per use, so occupancy suffers less from large
//     threadgroups: 4 SIMD-groups per mat_vec threadgroup, 512-key
//     attention chunks (fewer partials to merge). 128 chained tokens: the
//     CPU-side cost per command buffer is the same while the GPU step is
//     shortest here.
//   - Apple8 (M2, A15/A16): the M1 structure with more bandwidth (100 GB/s
//     for M2); the defaults keep enough SIMD-groups in flight to saturate
//     memory on 8-10 GPU cores; 64 chained tokens.
//   - Apple7 (M1, A14): 68 GB/s and a fixed register file: the defaults
//     (4 rows per SIMD-group stays under the register count at which
//     occupancy halves); 64 chained tokens.
//   - Mac2 (Intel Macs with AMD or Intel GPUs): discrete GPUs reach shared
//     (system) memory over PCIe, so 2 rows per SIMD-group (less register
//     pressure on wavefronts that are not 32 wide) and 32 chained tokens,
//     because a long chain holds the queue longer per check of stop
//     conditions.
//   - default: the Apple7 values, safe on every Apple GPU.
//   - cuda (every NVIDIA GPU, cuda.Tuning; not a Metal family): warps
//     are scheduled on 100+ multiprocessors (132 on an H200) that each
//     hold up to 64 warps, so decode's narrow products need more
//     threadgroups than Apple's 8-10 cores: 4 warps per threadgroup, and
//     2 rows per warp since Q|K|V and gate|up run as one product each
//     (engine/llm/fuse.go): the SmolLM2 shape's 960-row Q|K|V product is
//     120 threadgroups, gate|up 384, the 576-row ones 72 (issue #34 round
//     3 on an H200, q8_0 tg128: 357 tok/s against 319 at one row per warp,
//     which round 2 had measured best before the fusion), and 4 rows
//     for products 2048 or more wide (the Llama-3.2-1B shape's: 286
//     against 250 tok/s at 2; the SmolLM2 shape at 4 everywhere: 390
//     against 407); decode
//     attention splits into 32-key chunks, so a short cache spreads over
//     more warps than one per head (the anchor's profile: one warp per
//     head walking 128 keys took 66 µs), up to 16 warps per
//     multiprocessor and 64 chunks per head (AttnSplitGroups,
//     AttnMaxChunks; issue #34 round 4, 4096 cached keys on an H200: the
//     1B shape's 128 32-key partials per head made attention_merge 92.9 µs
//     a layer against attention's 64.2, 179.2 tok/s; capped at 4, 8 and 16
//     warps per multiprocessor (16, 33, 66 chunks) 165.5, 199.1 and 200.4:
//     a warp walking 256 keys is the slower chain; the SmolLM2 shape's 9
//     heads: 58 chunks 217.2 against 128 chunks 188.2; with both caps, a
//     second machine: SmolLM2 210.1, 1B 194.9 tok/s, against 186.3 and
//     188.2 at AttnMaxChunks 32 and 201.9 and 198.6 at 128);
//     the sampler's segments of 1024 tokens (SampleSegment): 48 groups
//     of the 49K vocabulary's masses on as many multiprocessors, one
//     token a thread of sample's 1024; Whisper's filter and track in
//     segments of 1024 logits (WhisperSegment): 51 groups a row.
var Families = []Tuning{
	{Family: "apple9", ChainLength: 128, MatVecSIMDGroups: 4, AttnChunk: 512},
	{Family: "apple8", ChainLength: 64},
	{Family: "apple7", ChainLength: 64},
	{Family: "mac2", ChainLength: 32, MatVecRows: 2},
	{Family: "cuda", Repack: RepackRows, Align16: Aligned16, MatVecRows: 2, MatVecRowsWide: 4, MatVecSIMDGroups: 4, MatVecBatchMany: 4,
		MatVecQ8K: MatVecWideK, MatVecQ8Rows: 2, MatVecQ8SIMDGroups: 4, MatVecQ8Groups: 2,
		MatVecQ8SIMDGroupsLong: 8, MatVecQ8GroupsLong: 1, MatVecQ8GroupsPre: 4, MatVecQ8PreK: MatVecWideK, AttnChunk: 32, AttnSplitGroups: 16, AttnMaxChunks: 64, AttnGroupKeys: 1024,
		AttnTicket: TicketMerge, AttnFoldO: FoldO, AttnFoldSlices: 8, AttnPagedChunk: PagedSplitOff, AttnPagedValues: PagedValuesBatched, SampleSegment: 1024, WhisperSegment: 1024},
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

// withDefaults fills every zero knob from Default.
func (t Tuning) withDefaults() Tuning {
	d := Default
	fill := func(v *uint32, def uint32) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&t.SIMDWidth, d.SIMDWidth)
	fill(&t.MaxThreads, d.MaxThreads)
	fill(&t.ChainLength, d.ChainLength)
	fill(&t.MatVecRows, d.MatVecRows)
	fill(&t.MatVecRowsWide, t.MatVecRows)
	fill(&t.MatVecBatch, d.MatVecBatch)
	fill(&t.MatVecBatchMany, d.MatVecBatchMany)
	fill(&t.MatVecSIMDGroups, d.MatVecSIMDGroups)
	fill(&t.MatVecQ8K, d.MatVecQ8K)
	fill(&t.MatVecQ8KQ8_0, t.MatVecQ8K)
	fill(&t.MatVecQ8Rows, d.MatVecQ8Rows)
	fill(&t.MatVecQ8SIMDGroups, d.MatVecQ8SIMDGroups)
	fill(&t.MatVecQ8Groups, d.MatVecQ8Groups)
	fill(&t.MatVecQ8RowsLong, t.MatVecQ8Rows)
	fill(&t.MatVecQ8SIMDGroupsLong, t.MatVecQ8SIMDGroups)
	fill(&t.MatVecQ8GroupsLong, t.MatVecQ8Groups)
	fill(&t.MatVecQ8GroupsPre, t.MatVecQ8Groups)
	fill(&t.MatVecQ8PreK, d.MatVecQ8PreK)
	fill(&t.EmbedThreads, d.EmbedThreads)
	fill(&t.Repack, d.Repack)
	fill(&t.Align16, d.Align16)
	fill(&t.NormThreads, d.NormThreads)
	fill(&t.RopeThreads, d.RopeThreads)
	fill(&t.AttnRows, d.AttnRows)
	fill(&t.AttnChunk, d.AttnChunk)
	fill(&t.AttnSplitBelow, d.AttnSplitBelow)
	fill(&t.AttnSplitGroups, d.AttnSplitGroups)
	fill(&t.AttnMaxChunks, d.AttnMaxChunks)
	fill(&t.AttnGroupKeys, d.AttnGroupKeys)
	fill(&t.AttnTicket, d.AttnTicket)
	fill(&t.AttnFoldO, d.AttnFoldO)
	fill(&t.AttnFoldSlices, d.AttnFoldSlices)
	fill(&t.AttnPagedSIMDGroups, d.AttnPagedSIMDGroups)
	fill(&t.AttnPagedChunk, d.AttnPagedChunk)
	fill(&t.AttnPagedSplitGroups, d.AttnPagedSplitGroups)
	fill(&t.AttnPagedValues, d.AttnPagedValues)
	fill(&t.ArgmaxSegment, d.ArgmaxSegment)
	fill(&t.ArgmaxThreads, d.ArgmaxThreads)
	fill(&t.SampleThreads, d.SampleThreads)
	fill(&t.SampleSegment, d.SampleSegment)
	fill(&t.SampleSegmentThreads, d.SampleSegmentThreads)
	fill(&t.WhisperSegment, d.WhisperSegment)
	fill(&t.WhisperThreads, d.WhisperThreads)
	return t
}
