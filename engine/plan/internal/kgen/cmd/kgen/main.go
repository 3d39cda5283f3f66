// Command kgen writes the generated forms of the kernel contract
// (engine/plan/internal/kgen). Run by `go generate ./engine/plan`.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/engine/plan/internal/kgen"
)

func main() {
	root := "../.." // go generate runs in engine/plan
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	outs, err := kgen.Outputs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, data := range outs {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
