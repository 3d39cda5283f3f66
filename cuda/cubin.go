package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/harkapp/hark/cuda/ptxpdl"
)

// cubin/ holds machine code made by ptxas on a GPU machine
// (bench/cuda/cubins.sh) from the embedded modules' PTX, so that a GPU it
// covers loads at once instead of the driver JIT-compiling ~12 MB of PTX
// (40-50 s on a fresh H200). Files are MODULE.sm_CC.cubin.xz (xz: the
// cubins are ~20x smaller so, gzip only ~4x, and they travel with every
// checkout); SOURCE lists "MODULE SHA-256" of the .ptx.xz each module's
// cubins were made from. A module whose PTX has changed since
// (a kernel change not yet rebuilt) JIT-compiles its PTX again, and
// TestCubinGuard fails until the cubins are rebuilt or removed (SOURCE
// "none"). The files are embedded (cubin_embed.go) unless the build tag
// hark_nocubin leaves them out (test binaries carried to the GPU machine,
// which read the checkout's copy through $HARK_CUDA_CUBIN_DIR).

// cubinTargets are the architectures each module's cubins are made for:
// the base module (sm_75 PTX) for every supported architecture up to the
// H200's, the native modules for theirs. A newer GPU JIT-compiles the PTX.
var cubinTargets = map[string][]string{
	"kernels": {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"},
	"sm80":    {"sm_80", "sm_86", "sm_89", "sm_90"},
	"sm90a":   {"sm_90a"},
}

// moduleStored is the embedded, compressed PTX of a module named in
// cubinTargets (cuda/gen writes it with fixed settings, so its bytes
// change exactly when the PTX does, for one xz version).
func moduleStored(module string) []byte {
	switch module {
	case "kernels":
		return kernelsPTXStored
	case "sm80":
		return kernelsSM80PTXStored
	case "sm90a":
		return kernelsSM90aPTXStored
	}
	panic("cuda: no module " + module)
}

// ptxHash is the SHA-256 of the base module's inflated PTX (the JIT
// notice's key).
func ptxHash() string { return sha256Hex([]byte(kernelsPTX())) }

// moduleHash is the SHA-256 of a module's embedded .ptx.xz: what SOURCE
// holds, so a GPU the cubins cover never decodes the 15 MB base PTX.
func moduleHash(module string) string { return sha256Hex(moduleStored(module)) }

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// cubinSource is one SOURCE line: the hash of the .ptx.xz a module's
// cubins were made from, and whether its cubins for sm_90 and newer were
// made from the PTX's PDL form (cuda/ptxpdl: "pdl" after the hash), so
// their kernels wait for their predecessors and may be launched early.
type cubinSource struct {
	hash string
	pdl  bool
}

// cubinSources parses fsys's SOURCE: module -> what its cubins were made
// from ("none": no cubins).
func cubinSources(fsys fs.FS) (map[string]cubinSource, error) {
	b, err := fs.ReadFile(fsys, "SOURCE")
	if err != nil {
		return nil, err
	}
	out := map[string]cubinSource{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && f[0] == "none":
		case len(f) == 2:
			out[f[0]] = cubinSource{hash: f[1]}
		case len(f) == 3 && f[2] == "pdl":
			out[f[0]] = cubinSource{hash: f[1], pdl: true}
		default:
			return nil, fmt.Errorf("cuda: cubin/SOURCE: bad line %q", line)
		}
	}
	return out, nil
}

// archOf is the ptxas architecture of compute capability cc for a module:
// "sm_90a" for the sm90a module, else "sm_CC".
func archOf(module string, cc int) string {
	if module == "sm90a" {
		return fmt.Sprintf("sm_%da", cc)
	}
	return fmt.Sprintf("sm_%d", cc)
}

// embeddedCubins is the cubin folder; $HARK_CUDA_CUBIN_DIR names another
// (bench/cuda/cubins.sh's output, to try cubins on the GPU machine before
// they are committed and embedded).
func embeddedCubins() fs.FS {
	if d := os.Getenv("HARK_CUDA_CUBIN_DIR"); d != "" {
		return os.DirFS(d)
	}
	return embedded
}

// cubinFor returns module's cubin for compute capability cc, or nil when
// there is none or it was made from other PTX, and whether its kernels
// were made for programmatic dependent launch.
func cubinFor(module string, cc int) ([]byte, bool) { return cubinIn(embeddedCubins(), module, cc) }

// cubinIn is cubinFor over the cubin folder fsys.
func cubinIn(fsys fs.FS, module string, cc int) ([]byte, bool) {
	src, err := cubinSources(fsys)
	if err != nil || src[module].hash == "" || src[module].hash != moduleHash(module) {
		return nil, false
	}
	b, err := readCubin(fsys, fmt.Sprintf("%s.%s.cubin.xz", module, archOf(module, cc)))
	if err != nil {
		return nil, false
	}
	return b, src[module].pdl && cc >= ptxpdl.MinCompute
}

// readCubin inflates a cubin of fsys, or reads it from the user's cache
// where an earlier process left it inflated (cubincache.go).
func readCubin(fsys fs.FS, name string) ([]byte, error) {
	z, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if b := cachedCubin(z); b != nil {
		return b, nil
	}
	b, err := inflateCubin(name, z)
	if err != nil {
		return nil, err
	}
	storeCubin(z, b)
	return b, nil
}

// inflateCubin decompresses the xz stream z of cubin name.
func inflateCubin(name string, z []byte) ([]byte, error) {
	inflations.Add(1)
	r, err := xz.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %w", name, err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %w", name, err)
	}
	return b, nil
}
