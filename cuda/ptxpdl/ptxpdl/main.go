// Command ptxpdl writes the PDL form of a PTX module (package ptxpdl):
// standard input to standard output. bench/cuda/cubins.sh runs it on the
// GPU machine, which has no Go, to make the sm_90 cubin of the base
// module; build it here and carry it:
//
//	CGO_ENABLED=0 go build -o .gpu/NAME/ptxpdl ./cuda/ptxpdl/ptxpdl
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/harkapp/hark/cuda/ptxpdl"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var out []byte
		if out, err = ptxpdl.Patch(in); err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
