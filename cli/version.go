package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/backends"
	"github.com/harkapp/hark/internal/version"
)

// VersionOptions is what `hark version` prints, and where.
type VersionOptions struct {
	IOStreams
	Info version.Info // the stamped release and the compiled-in backends
}

// addVersion gives the root `hark --version` (and `hark version`): the
// stamped release, commit, build date and compiled-in backends. runF,
// when not nil, replaces runVersion (tests).
func addVersion(root *cobra.Command, runF func(*VersionOptions) error) {
	info := version.Get(backends.Compiled())
	root.Version = info.String()
	root.SetVersionTemplate("{{.Version}}\n")
	o := &VersionOptions{Info: info}
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and compiled-in backends",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.IOStreams = envOf(cmd).IOStreams
			if runF != nil {
				return runF(o)
			}
			return runVersion(o)
		},
	})
}

// runVersion prints the version line.
func runVersion(o *VersionOptions) error {
	_, err := fmt.Fprintln(o.Out, o.Info.String())
	return err
}
