// Command llm-random writes the synthetic LLM parity models (see
// engine/llm/parity) for tools/parity/llm_hf.py to load.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/engine/llm/parity"
)

func main() {
	out := flag.String("out", ".", "output directory")
	flag.Parse()
	for _, c := range parity.Configs {
		p := filepath.Join(*out, c.Name+".gguf")
		f, err := os.Create(p)
		if err == nil {
			err = parity.Write(c, f, parity.F32)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "llm-random:", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
