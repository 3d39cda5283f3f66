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
	fn := regexp.MustCompile(`^(?:\.(?:visible|weak)\s+)?\.(?:entry|func)\s+(?:\(.*\)\s+)?([A-Za-z_][A-Za-z0-9_$]*)`)
	depot := regexp.MustCompile(`\.local\s+\.align\s+\d+\s+\.b8\s+__local_depot\d+\[(\d+)\]`)
	out := map[string]int{}
	cur := ""
	for _, line := range strings.Split(ptx, "\n") {
		if m := fn.FindStringSubmatch(line); m != nil {
			cur = m[1]
			out[cur] += 0
			continue
		}
		if m := depot.FindStringSubmatch(line); m != nil && cur != "" {
			n, _ := strconv.Atoi(m[1])
			out[cur] += n
		}
	}
	return out
}

// TestMatVecNoLocalMemory: the mat-vec kernels (every weight type and
// fused form) keep their activation chunks, dequantised weights and
// accumulators in registers. Fails on round 1's kernels (128 to 192 bytes
// of arrays per mat_vec_impl instance, on top of the entry's).
func TestMatVecNoLocalMemory(t *testing.T) {
	local := ptxLocalBytes(kernelsPTX)
	seen := 0
	for name, n := range local {
		if strings.Contains(name, "mat_vec_impl") {
			seen++
			require.Zero(t, n, "%s declares %d bytes of local memory", name, n)
		}
	}
	// 4 forms (plain, RMSNorm, SiLU, GELU) × 14 weight types; a kernel
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
	for name, b := range ptxLocalBytes(kernelsPTX) {
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
