package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/runtime"
)

const (
	backendFlag = "backend"
	gpuFlag     = "gpu"
	gpuHelp     = "GPU index for the CUDA backend (Metal uses the system GPU and refuses any other index)"
)

// addBackendFlag adds --backend and --gpu to a command that loads models.
func addBackendFlag(cmd *cobra.Command) {
	cmd.Flags().String(backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names(), ", ")+" (auto: Metal on Apple GPUs, CUDA on NVIDIA GPUs, else the CPU)")
	cmd.Flags().Int(gpuFlag, 0, gpuHelp)
}

// backendFlags checks --backend and --gpu before any model loads.
func backendFlags(e Env) (name string, gpu int, err error) {
	name, gpu = e.Backend, e.GPU
	if name == "" {
		name = backends.Auto
	}
	if err := backends.Valid(name); err != nil {
		return "", 0, err
	}
	if err := backends.ValidGPU(gpu); err != nil {
		return "", 0, err
	}
	return name, gpu, nil
}

// newRuntime is the model cache of one command: the backend --backend
// and --gpu name, notes (why auto used the CPU) on stderr, no memory budget (the
// user asked for this model) and no idle unload.
func newRuntime(e Env, opt runtime.Options) (*runtime.Runtime, error) {
	var err error
	if opt.Backend, opt.GPU, err = backendFlags(e); err != nil {
		return nil, err
	}
	opt.Log = e.ErrOut
	opt.Budget = -1
	opt.IdleCheck = 24 * time.Hour
	return runtime.New(opt), nil
}
