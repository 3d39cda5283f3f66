package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/cuda/ptxstore"
	"github.com/harkapp/hark/shaders/msl"
)

func mslParam(attr string, index int) msl.Param {
	return msl.Param{Attr: attr, Index: index}
}

// TestGenerated regenerates the CUDA translation and its PTX from the
// .metal sources and requires the checked-in cuda/kernels.ptx.xz (its
// content) and cuda/kernels_gen.go to be byte for byte what it makes: a kernel edit
// without `go generate ./cuda` fails here. Needs clang (CI installs it);
// ~30-60 s on the 2-core dev machine.
func TestGenerated(t *testing.T) {
	root := repoRoot()
	unit, table, err := Generate(root)
	require.NoError(t, err)
	ptx, err := Compile(root, unit)
	require.NoError(t, err)
	wantTable, err := os.ReadFile(filepath.Join(root, "cuda", "kernels_gen.go"))
	require.NoError(t, err)
	require.Equal(t, string(wantTable), string(table), "cuda/kernels_gen.go is stale: run go generate ./cuda")
	wantPTX, err := ptxstore.Read(filepath.Join(root, "cuda", BaseFile))
	require.NoError(t, err)
	if string(wantPTX) != string(ptx) {
		t.Fatalf("cuda/kernels.ptx.xz is stale (or another clang made it: %d bytes checked in, %d made): run go generate ./cuda", len(wantPTX), len(ptx))
	}
}

// Every kernel parameter attribute the executor accepts has a CUDA form.
func TestParamForms(t *testing.T) {
	for _, a := range []string{"thread_position_in_grid", "thread_position_in_threadgroup", "threadgroup_position_in_grid",
		"threads_per_threadgroup", "threadgroups_per_grid", "threads_per_grid", "thread_index_in_threadgroup",
		"thread_index_in_simdgroup", "simdgroup_index_in_threadgroup", "simdgroups_per_threadgroup",
		"threads_per_simdgroup", "thread_execution_width"} {
		_, err := entryArgs("P.bufs", "P.args").ParamExpr(mslParam(a, -1))
		require.NoError(t, err, a)
	}
	_, err := entryArgs("P.bufs", "P.args").ParamExpr(mslParam("buffer", 16))
	require.Error(t, err)
	_, err = entryArgs("P.bufs", "P.args").ParamExpr(mslParam("threadgroup", 1))
	require.Error(t, err)
	_, err = entryArgs("P.bufs", "P.args").ParamExpr(mslParam("sample_id", -1))
	require.Error(t, err)
}

// TestGeneratedNative: every native module (cuda/kernels_<name>.ptx.xz) is
// byte for byte what clang 19 makes from cuda/native (CI installs
// clang-19 through scripts/setup), at its architecture and PTX ISA.
func TestGeneratedNative(t *testing.T) {
	root := repoRoot()
	require.NotEmpty(t, Modules)
	for _, m := range Modules {
		ptx, err := CompileNative(root, m)
		require.NoError(t, err, m.Name)
		s := string(ptx)
		require.Contains(t, s, "\n.target "+m.Arch+"\n", m.Name)
		require.Contains(t, s, "\n.version "+m.ISA[3:4]+"."+m.ISA[4:]+"\n", m.Name)
		want, err := ptxstore.Read(filepath.Join(root, "cuda", m.File()))
		require.NoError(t, err, "%s: run go generate ./cuda", m.File())
		if string(want) != s {
			t.Fatalf("cuda/%s is stale (or another clang made it: %d bytes checked in, %d made): run go generate ./cuda", m.File(), len(want), len(s))
		}
	}
}
