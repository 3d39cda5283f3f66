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
	Info version.Info // the stamped release and the backends this machine would use
}

// addVersion gives the root `hark --version` (and `hark version`): the
// stamped release, commit, build date and the backends this machine would
// use (backends.Here, from the driver list). The line is built when asked
// for, so other commands do not probe the GPU drivers for it. runF, when
// not nil, replaces runVersion (tests).
func addVersion(root *cobra.Command, runF func(*VersionOptions) error) {
	info := func() version.Info { return version.Get(backends.Here()) }
	root.Version = "hark" // non-empty: cobra adds --version
	root.SetVersionTemplate("{{harkVersion}}\n")
	cobra.AddTemplateFunc("harkVersion", func() string { return info().String() })
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and the backends this machine would use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &VersionOptions{IOStreams: envOf(cmd).IOStreams, Info: info()}
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
