package cpu

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/internal/mapfile"
	"github.com/harkapp/hark/engine/plan"
	"github.com/stretchr/testify/require"
)

// mappedRSS is the resident size of this process's mappings of path
// (/proc/self/smaps' Rss lines).
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		if len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[5] == path
			continue
		}
		if in && len(fs) == 3 && fs[0] == "Rss:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			require.NoError(t, err)
			rss += kb << 10
		}
	}
	require.NoError(t, sc.Err())
	return rss
}

// A matrix that a decode product packs is also the embedding table (tied
// weights) and a prefill product's weights. Loaded from a file mapping,
// its pages are released once packed and stay released through the
// embedding lookup, the row product and the GEMM, whose results are
// bit-for-bit those of the unpacked matrix. Without the release the
// mapping's resident size is the whole table.
func TestPackedOriginalReleased(t *testing.T) {
	withPortablePacked(t)
	const rows, dim, m = 1003, 96, 17 // rows not a multiple of the group: tail rows
	r := rand.New(rand.NewPCG(4, 4))
	table := randWeights(r, ggml.Q8_0, rows, dim)
	page := os.Getpagesize()
	require.Greater(t, len(table), 16*page, "the table spans many pages")
	path := filepath.Join(t.TempDir(), "table.bin")
	require.NoError(t, os.WriteFile(path, table, 0o600))
	mf, err := mapfile.Open(path)
	require.NoError(t, err)
	defer mf.Close()
	require.True(t, mf.Mapped())

	ids := []int32{3, 1001, 0, 1002, 999}
	x := randF32(r, m*dim)
	h := newHarness(t)
	tb := h.weights("table", mf.Data)
	ib := h.i32("ids", ids)
	emb := h.nan("emb", len(ids)*dim)
	xb := h.f32("x", x)
	dec := h.nan("decode", rows)
	pre := h.nan("prefill", m*rows)
	h.add(plan.EmbedArgs{Type: ggml.Q8_0, Table: bind(tb), Ids: bind(ib), Out: bind(emb), Add: plan.None, Dim: dim, N: len(ids), Ldo: dim}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(tb), X: bind(xb), Out: bind(dec), Bias: plan.None, Res: plan.None, N: rows, K: dim, M: 1, Ldx: dim, Ldo: rows}.Dispatch())
	h.add(plan.MatMulArgs{Type: ggml.Q8_0, W: bind(tb), X: bind(xb), Out: bind(pre), Bias: plan.None, Res: plan.None, N: rows, K: dim, M: m, Ldx: dim, Ldo: rows}.Dispatch())
	ex := h.load()
	require.Equal(t, len(table), ex.packed)
	require.Equal(t, int64(len(table)/page*page), ex.released, "every whole page of the table")
	require.LessOrEqual(t, mappedRSS(t, path), int64(page), "after load: at most the partial last page")
	h.run(plan.Vars{})
	require.LessOrEqual(t, mappedRSS(t, path), int64(page), "after a step: nothing read the original")

	deq := make([]float32, rows*dim)
	require.NoError(t, ggml.Dequantize(ggml.Q8_0, table, deq))
	got := h.readF32(emb)
	for i, id := range ids {
		for j := range dim {
			require.Equal(t, math.Float32bits(deq[int(id)*dim+j]), math.Float32bits(got[i*dim+j]), "embedding %d [%d]", i, j)
		}
	}
	mm := NewMatMul(testPool)
	for _, c := range []struct {
		id plan.BufID
		m  int
	}{{dec, 1}, {pre, m}} {
		want := make([]float32, c.m*rows)
		require.NoError(t, mm.Mul(ggml.Q8_0, table, rows, dim, c.m, x, dim, want, rows, nil, nil, 0))
		got := h.readF32(c.id)
		for j := range want {
			require.Equal(t, math.Float32bits(want[j]), math.Float32bits(got[j]), "m=%d out %d", c.m, j)
		}
	}
}
