package msl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A threadgroup declaration becomes the dialect's per-threadgroup form,
// one per array where it declares several; pointers to threadgroup memory
// and parameters stay as written, and line numbers are kept.
func TestThreadgroupDeclarators(t *testing.T) {
	declare := func(typ, name, dims string) string { return "TG(" + typ + "," + name + "," + dims + ");" }
	for _, c := range []struct{ in, want string }{
		{"threadgroup float a[4];", "TG(float,a,[4]);"},
		{"threadgroup float tm[N], ts[N],\n    tw[2 * N];", "TG(float,tm,[N]); TG(float,ts,[N]); TG(float,tw,[2 * N]);\n"},
		{"threadgroup float2 v[f(1, 2)], w[3];", "TG(float2,v,[f(1, 2)]); TG(float2,w,[3]);"},
		{"threadgroup float* p = q;", "threadgroup float* p = q;"},
		{"void k(threadgroup float* a, threadgroup float* b);", "void k(threadgroup float* a, threadgroup float* b);"},
		{"threadgroup_barrier(mem_flags::mem_threadgroup);", "threadgroup_barrier(mem_flags::mem_threadgroup);"},
	} {
		got := rewriteThreadgroupDecls(c.in, declare)
		require.Equal(t, c.want, got, "%q", c.in)
		require.Equal(t, strings.Count(c.in, "\n"), strings.Count(got, "\n"))
	}
}
