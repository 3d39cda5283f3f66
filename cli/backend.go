package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
)

const backendFlag = "backend"

// addBackendFlag adds --backend to a command that loads models.
func addBackendFlag(cmd *cobra.Command) {
	cmd.Flags().String(backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names(), ", ")+" (auto: Metal on Apple GPUs, else the CPU)")
}

// openBackend opens the backend --backend names, logging to stderr why the
// CPU was used when Metal was expected.
func openBackend(cmd *cobra.Command, threads int) (backends.Backend, error) {
	name, _ := cmd.Flags().GetString(backendFlag)
	b, reason, err := backends.Open(name, threads)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "hark:", reason)
	}
	return b, nil
}
