package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// The cubins (if any are checked in) were made from the checked-in PTX:
// after a kernel change and `go generate ./cuda`, rebuild them on a GPU
// machine (bench/cuda/run.sh) or delete them and write "none" in SOURCE.
func TestCubinGuard(t *testing.T) {
	ents, err := cubins.ReadDir("cubin")
	require.NoError(t, err)
	src, err := cubins.ReadFile("cubin/SOURCE")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".cubin") {
			n++
		}
	}
	if n == 0 {
		require.Equal(t, "none", strings.TrimSpace(string(src)))
		return
	}
	require.Equal(t, ptxHash(), strings.TrimSpace(string(src)), "cuda/cubin was made from another kernels.ptx: rebuild the cubins (bench/cuda/run.sh) or remove them")
	for _, cc := range []int{80, 86, 89, 90} {
		require.NotNil(t, cubinFor(cc), "sm_%d", cc)
	}
	require.Nil(t, cubinFor(75)) // older and unknown GPUs JIT the PTX
}

// Every function constant has a type the host can set, and the entry
// points are the translated kernels (the table is generated with the PTX).
func TestKernelTable(t *testing.T) {
	require.NotEmpty(t, kernelNames)
	for _, c := range funcConsts {
		require.Contains(t, []int{1, 2, 4}, c.size, c.name)
		require.Contains(t, kernelsPTX(), ".const .align", c.name)
	}
	for _, k := range kernelNames {
		require.Contains(t, kernelsPTX(), ".entry "+entryPrefix+k+"(", k)
	}
}

// gpu opens GPU 0 or skips the test when this machine has none.
func gpu(t *testing.T) *Backend {
	t.Helper()
	return gpuWith(t, Options{})
}

func TestNewWithoutGPU(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA device")
	}
	_, err := New(Options{})
	require.ErrorIs(t, err, ErrUnavailable)
}

// On a GPU: every kernel of the table loads, and bad plans and calls give
// errors naming the plan, op and kernel instead of reaching the GPU.
func TestGPUErrors(t *testing.T) {
	b := gpu(t)
	t.Logf("%s", b.Info())
	for _, k := range kernelNames {
		_, err := b.dev.function(k)
		require.NoError(t, err, k)
	}
	p := &plan.Plan{Name: "bad"}
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 64})
	y := p.AddBuffer(plan.Buffer{Name: "y", Kind: plan.Scratch, Size: 64})
	ps, _ := p.AddPass("main")
	d := plan.Dispatch{Kernel: plan.Scale, Grid: [3]uint32{1, 1, 1}}
	d.Bind, d.NBind = plan.Binds(plan.Binding{Buf: x}, plan.Binding{Buf: y})
	d.P[0], d.P[1], d.P[2], d.P[3] = 64, 1, 64, 64 // 64 floats: 256 bytes, the buffers hold 64
	ps.Add(d)
	ex, err := b.Load(p)
	if err != nil {
		t.Logf("refused at load: %v", err)
		return
	}
	defer ex.Close()
	err = ex.Run(0, &plan.Vars{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "cuda: plan bad/main op 0")
	require.Error(t, ex.Read(y, 0, make([]byte, 4)))
	require.Error(t, ex.Read(x, 60, make([]byte, 8)))
	require.Error(t, ex.Run(1, &plan.Vars{}))
}
