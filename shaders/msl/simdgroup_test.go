package msl

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The simdgroup-matrix emulation (storage, fill, load, store, products) is
// written once, in cxx/msl_simdgroup.h; each target header defines only
// its lane and its operand exchange (sg_peers) and includes it.
func TestSimdgroupMatrixWrittenOnce(t *testing.T) {
	defines := regexp.MustCompile(`(?m)^\s*(template\s*<[^>]*>\s*)?(struct simdgroup_matrix\b[^;{]*\{|(MSL_SG_INLINE\s+)?inline\b[^;{]*\b(make_filled_simdgroup_matrix|simdgroup_load|simdgroup_store|simdgroup_multiply_accumulate|simdgroup_multiply)\s*\()|typedef simdgroup_matrix<`)
	read := func(p string) string {
		b, err := os.ReadFile(filepath.FromSlash(p))
		require.NoError(t, err)
		return string(b)
	}
	shared := read("cxx/msl_simdgroup.h")
	require.Len(t, defines.FindAllString(shared, -1), 8, "the shared header defines the whole emulation")
	for _, p := range []string{"../../cuda/cxx/msl_cuda.h", "../msltest/cxx/msl.h"} {
		src := read(p)
		require.Empty(t, defines.FindAllString(src, -1), "%s repeats part of the emulation", p)
		require.Contains(t, src, `#include "msl_simdgroup.h"`, p)
		require.Regexp(t, `struct sg_peers \{`, src, "%s defines the operand exchange", p)
		require.Regexp(t, `struct sg_extra \{`, src, "%s defines what it keeps besides the two elements", p)
	}
}
