package cli

import (
	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/internal/version"
)

// addVersion gives the root `hark --version` (and `hark version`): the
// stamped release, commit, build date and the backends this machine would
// use (backends.Here, from the driver list). The line is built when asked
// for, so other commands do not probe the GPU drivers for it.
func addVersion(root *cobra.Command) {
	line := func() string { return version.Get(backends.Here()).String() }
	root.Version = "hark" // non-empty: cobra adds --version
	root.SetVersionTemplate("{{harkVersion}}\n")
	cobra.AddTemplateFunc("harkVersion", line)
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and the backends this machine would use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Println(line())
			return nil
		},
	})
}
