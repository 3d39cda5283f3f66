package cuda

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// ptxLocalBytes maps every function of a PTX module (entries and device
// functions, by name) to the bytes of local memory it declares: arrays a
// kernel indexes at run time, or whose address escapes, live there, and
// each access is a load or store through the L1 (issue #34: round 1's
// mat-vecs spent most of their time on 544-952-byte stack frames).
func ptxLocalBytes(ptx string) map[string]int {
	depot := regexp.MustCompile(`\.local\s+\.align\s+\d+\s+\.b8\s+__local_depot\d+\[(\d+)\]`)
	out := map[string]int{}
	for _, f := range ptxFunctions(ptx) {
		out[f.name] += 0
		for _, m := range depot.FindAllStringSubmatch(f.body, -1) {
			n, _ := strconv.Atoi(m[1])
			out[f.name] += n
		}
	}
	return out
}

type ptxFunc struct{ name, body string }

// ptxFunctions splits a PTX module into its functions (entries and device
// functions): each from its header line to the next one.
func ptxFunctions(ptx string) []ptxFunc {
	fn := regexp.MustCompile(`^(?:\.(?:visible|weak)\s+)?\.(?:entry|func)\s+(?:\(.*\)\s+)?([A-Za-z_][A-Za-z0-9_$]*)`)
	var out []ptxFunc
	var body strings.Builder
	flush := func() {
		if len(out) > 0 {
			out[len(out)-1].body = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.Split(ptx, "\n") {
		if m := fn.FindStringSubmatch(line); m != nil && !strings.HasSuffix(strings.TrimSpace(line), ";") {
			flush()
			out = append(out, ptxFunc{name: m[1]})
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	return out
}

// TestMatVecNoLocalMemory: the mat-vec kernels (every weight type and
// fused form) keep their activation chunks, dequantised weights and
// accumulators in registers. Fails on round 1's kernels (128 to 192 bytes
// of arrays per mat_vec_impl instance, on top of the entry's).
func TestMatVecNoLocalMemory(t *testing.T) {
	local := ptxLocalBytes(kernelsPTX())
	seen := 0
	for name, n := range local {
		if strings.Contains(name, "mat_vec_impl") {
			seen++
			require.Zero(t, n, "%s declares %d bytes of local memory", name, n)
		}
	}
	// 5 forms (plain, RMSNorm, LayerNorm, SiLU, GELU) × 14 weight types; a kernel
	// clang inlines into its entry has no function of its own, so at
	// least the plain forms must be there to be checked
	require.GreaterOrEqual(t, seen, 14, "mat_vec_impl functions found in kernels.ptx")
}

// TestEntriesDoNotCopyParams: no entry copies its parameter block
// (params, __hark::Params) to local memory. Fails on round 1's entries,
// which called the kernel twice (Args from the parameter, or patched in
// shared memory), so clang kept the kernel out of line and copied the
// block for the reference to its Args: 456 bytes of stack in every thread
// of every launch.
func TestEntriesDoNotCopyParams(t *testing.T) {
	size := int(unsafe.Sizeof(params{}))
	n := 0
	for name, b := range ptxLocalBytes(kernelsPTX()) {
		if strings.HasPrefix(name, entryPrefix) {
			n++
			require.Less(t, b, size, "%s declares %d bytes of local memory (the parameter block is %d)", name, b, size)
		}
	}
	require.Equal(t, len(kernelNames), n, "entries found in kernels.ptx")
}

func TestPTXLocalBytes(t *testing.T) {
	ptx := ".visible .entry hark_a(\n\t.param .b64 p\n)\n{\n\t.local .align 8 .b8 \t__local_depot0[456];\n}\n" +
		".weak .func _Z3fooi(\n)\n{\n}\n.func  (.param .b32 func_retval0) _Z3barv(\n)\n{\n\t.local .align 4 .b8 \t__local_depot2[64];\n}\n"
	require.Equal(t, map[string]int{"hark_a": 456, "_Z3fooi": 0, "_Z3barv": 64}, ptxLocalBytes(ptx))
}

// TestRMSNormMatVecNoBarrier: rms_norm_mat_vec sums the squares of x in
// the product's own pass (each SIMD-group covers the whole row), so its
// kernel function has no barrier. Fails on round 1's kernel, which ran a
// norm pass over x in every threadgroup between two barriers.
func TestRMSNormMatVecNoBarrier(t *testing.T) {
	seen := 0
	for _, f := range ptxFunctions(kernelsPTX()) {
		if strings.HasPrefix(f.name, "_Z12mat_vec_impl") && strings.Contains(f.name, "Li1EE") { // MODE 1: MV_RMS
			seen++
			require.NotContains(t, f.body, "bar.sync", f.name)
		}
	}
	require.NotZero(t, seen, "rms_norm_mat_vec kernel functions found in kernels.ptx")
}

// TestEntryPrologueDivisions: an entry's prologue (msl_cuda.h's patch and
// ids) divides only on the permuted-block path. Fails on the previous
// prologue: 20 remainders by the thread count (which thread copies which
// Args word) on every thread's path, 22 to 28 integer divisions in these
// entries; what is left here is the permutation's 4 and the kernel's own.
func TestEntryPrologueDivisions(t *testing.T) {
	div := regexp.MustCompile(`(?m)^\s*(?:rem|div)\.[us](?:32|64)\s`)
	want := map[string]bool{entryPrefix + "add": true, entryPrefix + "mat_vec_q8_0": true, entryPrefix + "rms_norm_mat_vec_q8_0": true}
	for _, f := range ptxFunctions(kernelsPTX()) {
		if want[f.name] {
			delete(want, f.name)
			require.LessOrEqual(t, len(div.FindAllString(f.body, -1)), 6, "%s: integer divisions", f.name)
		}
	}
	require.Empty(t, want, "entries not found in kernels.ptx")
}

// TestSiLUMatVecSingleExp: silu_mul_mat_vec's SiLU uses fast::exp, the
// hardware's ex2.approx, and no double precision. Fails on the previous
// kernel, which evaluated exp in double for every gate element.
func TestSiLUMatVecSingleExp(t *testing.T) {
	f64 := regexp.MustCompile(`(?m)^\s*[a-z.]+\.f64\s`)
	seen := 0
	for _, f := range ptxFunctions(kernelsPTX()) {
		if strings.HasPrefix(f.name, "_Z12mat_vec_impl") && strings.Contains(f.name, "Li2EE") && strings.Contains(f.body, "{") { // MODE 2: MV_SILU
			seen++
			require.Contains(t, f.body, "ex2.approx", f.name)
			require.Empty(t, f64.FindAllString(f.body, 3), "%s: double-precision instructions", f.name)
		}
	}
	require.NotZero(t, seen, "silu_mul_mat_vec kernel functions found in kernels.ptx")
}

// TestAttentionNoLocalMemory: decode attention (attention_f32/f16, and
// rope_attention's f32, f16 and group f16, issue #34 round 7, with their
// _a16 instances, issue #33; the ticket instances, round 10, and attention_ticket_f32_a16; rope_attention_mat_vec and its
// product's own launch, rope_attention_mat_vec_o, round 11; attention_paged and its _a16 instance, issue #38) and attention_tiled keep their per-lane
// accumulators in registers. Fails on
// round 2's kernels, whose loops over the head's dims ran to a run-time
// bound (i < nd) and so put acc[] in 32 bytes of local memory: a load and
// a store per key and dim in the hottest loop of decode attention.
func TestAttentionNoLocalMemory(t *testing.T) {
	seen := 0
	for name, n := range ptxLocalBytes(kernelsPTX()) {
		// the kernel functions (_Z9attention..., _Z19attention_tiled_...,
		// _Z14rope_attention..., _Z20rope_attention_group...), not their
		// entries (which hold the binding array)
		for _, p := range []string{"_Z9attentionI", "_Z19attention_tiled_", "_Z14rope_attentionI", "_Z20rope_attention_groupI",
			"_Z16attention_ticketI", "_Z21rope_attention_ticketI", "_Z22rope_attention_mat_vecI", "_Z24rope_attention_mat_vec_oI",
			"_Z15attention_pagedI"} {
			if strings.HasPrefix(name, p) {
				seen++
				require.Zero(t, n, "%s declares %d bytes of local memory", name, n)
			}
		}
	}
	require.Equal(t, 26, seen, "attention, attention_tiled, rope_attention, rope_attention_mat_vec and attention_paged (with its _a16) functions found in kernels.ptx")
}

// The tensor-core attention (cuda/native/attention_mma.cu) keeps Q's
// fragments and O's accumulators in registers at both head-size variants,
// and no native entry copies its parameter to local memory. Fails on the
// attention's first draft, whose per-row rescale indexed O by the row
// loop's variable and (at 128 dims) put O in 256 bytes of local memory,
// and on the kernels called out of line (before always_inline), whose
// entries wrote a 328-byte local copy of the parameter in every thread.
func TestAttentionTensorCoresNoLocalMemory(t *testing.T) {
	seen, attn := 0, 0
	for name, n := range ptxLocalBytes(kernelsSM80PTX()) {
		if strings.HasPrefix(name, "hark_") {
			seen++
			if strings.HasPrefix(name, "hark_attention_mma_tc") {
				attn++
			}
		}
		require.Zero(t, n, "%s declares %d bytes of local memory", name, n)
	}
	require.Equal(t, 4, attn, "attention_mma_tc entries (f32, f16; 64 and 128 dims) found in kernels_sm80.ptx")
	require.Equal(t, 26, seen, "entries of kernels_sm80.ptx (mat_vec_rows: its sums and decoded chunks in registers too; mat_vec_rows_mma: its fragments)")
}

// The translated entries keep their bindings in registers: the
// element-wise and norm kernels declare no local memory. Fails on the
// entries before patch() updated the bindings with one select each, where
// clang's single store through a computed address kept the 16 pointers in
// a 136-byte local array written by every thread (the encoder's gelu ran
// at L1 speed: ncu, bench/cuda/20261130-issue35-r3).
func TestEntriesKeepBindingsInRegisters(t *testing.T) {
	local := ptxLocalBytes(kernelsPTX())
	for _, e := range []string{"hark_gelu", "hark_add", "hark_layer_norm", "hark_rms_norm", "hark_silu_mul", "hark_copy_f32", "hark_scale"} {
		n, ok := local[e]
		require.True(t, ok, "%s found in kernels.ptx", e)
		require.Zero(t, n, "%s declares %d bytes of local memory", e, n)
	}
}
