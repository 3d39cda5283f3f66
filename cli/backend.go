package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
)

const (
	backendFlag = "backend"
	gpuFlag     = "gpu"
)

// addBackendFlag adds --backend and --gpu to a command that loads models.
func addBackendFlag(cmd *cobra.Command) {
	cmd.Flags().String(backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names, ", ")+" (auto: Metal on Apple GPUs, CUDA on Linux with an NVIDIA GPU, else the CPU)")
	cmd.Flags().Int(gpuFlag, 0, "GPU ordinal for the CUDA backend")
}

// openBackend opens the backend --backend names, logging to stderr why the
// CPU was used when Metal was expected.
func openBackend(cmd *cobra.Command, threads int) (backends.Backend, error) {
	name, _ := cmd.Flags().GetString(backendFlag)
	gpu, _ := cmd.Flags().GetInt(gpuFlag)
	b, reason, err := backends.OpenGPU(name, threads, gpu)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "hark:", reason)
	}
	return b, nil
}
