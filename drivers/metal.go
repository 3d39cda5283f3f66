package drivers

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/metal"
	"github.com/harkapp/hark/shaders"
)

// appleFamilies are the families of Apple-designed GPUs, where Metal is the
// default; on other Macs (Intel, "mac2") the CPU stays the default.
var appleFamilies = map[string]bool{"apple7": true, "apple8": true, "apple9": true}

// Seams for tests: the Metal opener, the list of kernels without MSL, the OS.
var (
	openMetal = func() (backends.Backend, metal.Info, error) {
		b, err := metal.New()
		if err != nil {
			return nil, metal.Info{}, err
		}
		return b, b.Info(), nil
	}
	missingKernels = shaders.Missing
	goos           = runtime.GOOS
	goarch         = runtime.GOARCH
)

// metalHere is Metal's Driver.Here: a Mac with Apple silicon, whose GPU
// (family apple7 or later) auto picks, and every kernel in MSL. It
// compiles nothing: opening Metal compiles the shader library.
func metalHere() bool {
	return goos == "darwin" && goarch == "arm64" && len(missingKernels()) == 0
}

// openMetalDriver opens Metal, refusing it while kernels are missing
// (every plan uses most of them) and, for auto, on GPUs that are not
// Apple's. Metal has one system GPU, so a GPU index other than 0 is
// refused rather than ignored.
func openMetalDriver(o backends.Options, auto bool) (backends.Backend, error) {
	if auto && goos != "darwin" {
		return nil, backends.ErrNotHere
	}
	if o.GPU != 0 {
		return nil, fmt.Errorf("metal: --gpu %d: Metal runs on the system GPU; --gpu chooses a CUDA device", o.GPU)
	}
	if m := missingKernels(); len(m) > 0 {
		names := make([]string, len(m))
		for i, k := range m {
			names[i] = k.String()
		}
		return nil, fmt.Errorf("metal: no MSL kernel yet for %s", strings.Join(names, ", "))
	}
	b, in, err := openMetal()
	if err != nil {
		return nil, err
	}
	if auto && !appleFamilies[in.Family] {
		b.Close()
		return nil, fmt.Errorf("%s is not an Apple GPU (family %s); --backend metal forces it", in.Name, in.Family)
	}
	return b, nil
}
