package cli

import (
	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/internal/version"
)

// addVersion gives the root `hark --version` (and `hark version`): the
// stamped release, commit, build date and compiled-in backends.
func addVersion(root *cobra.Command) {
	root.Version = version.Get(backends.Compiled()).String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and compiled-in backends",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Println(root.Version)
			return nil
		},
	})
}
