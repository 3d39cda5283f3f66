package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/engine/runtime"
)

const backendFlag = "backend"

// addBackendFlag adds --backend to a command that loads models.
func addBackendFlag(cmd *cobra.Command) {
	cmd.Flags().String(backendFlag, backends.Auto, "inference backend: "+strings.Join(backends.Names(), ", ")+" (auto: Metal on Apple GPUs, else the CPU)")
}

// newRuntime is the model cache of one command: the backend --backend
// names, notes (why auto used the CPU) on stderr, no memory budget (the
// user asked for this model) and no idle unload.
func newRuntime(cmd *cobra.Command, opt runtime.Options) (*runtime.Runtime, error) {
	opt.Backend, _ = cmd.Flags().GetString(backendFlag)
	if err := backends.Valid(opt.Backend); err != nil {
		return nil, err
	}
	opt.Log = cmd.ErrOrStderr()
	opt.Budget = -1
	opt.IdleCheck = 24 * time.Hour
	return runtime.New(opt), nil
}
