package cuda

import (
	"bytes"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
)

// The cubins (if any are checked in) were made from the checked-in PTX:
// after a kernel change and `go generate ./cuda`, rebuild them on a GPU
// machine (bench/cuda/cubins.sh) or delete them and write "none" in SOURCE.
// Each module with cubins has one for every target, and each inflates to an
// ELF image (what cuModuleLoadData takes).
func TestCubinGuard(t *testing.T) {
	dir := embeddedCubins() // or $HARK_CUDA_CUBIN_DIR: new cubins checked before they are committed
	ents, err := fs.ReadDir(dir, ".")
	require.NoError(t, err)
	src, err := cubinSources(dir)
	require.NoError(t, err)
	files := map[string]bool{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".cubin.xz") {
			files[e.Name()] = true
		}
	}
	if len(src) == 0 {
		require.Empty(t, files, "cubin/SOURCE is none but cubins are checked in")
		return
	}
	for module, s := range src {
		hash := s.hash
		targets, ok := cubinTargets[module]
		require.True(t, ok, "cubin/SOURCE names an unknown module %q", module)
		require.Equal(t, moduleHash(module), hash, "cuda/cubin's %s cubins were made from other PTX: rebuild the cubins (bench/cuda/cubins.sh) or remove them", module)
		for _, arch := range targets {
			name := module + "." + arch + ".cubin.xz"
			require.True(t, files[name], "missing %s", name)
			delete(files, name)
			b, err := readCubin(dir, name)
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(b, []byte("\x7fELF")), "%s is not an ELF image", name)
		}
	}
	require.Empty(t, files, "cubins of no module in SOURCE")
	if src["kernels"].hash != "" {
		b, _ := cubinFor("kernels", 90)
		require.NotNil(t, b)
		b, _ = cubinFor("kernels", 100)
		require.Nil(t, b) // a newer GPU JITs the PTX
	}
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
