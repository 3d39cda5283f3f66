// Command whisper-random writes the synthetic parity models (see
// engine/whisper/parity) for tools/parity/whisper_hf.py to load.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/engine/whisper/parity"
)

func main() {
	assets := flag.String("assets", "../shared/whisper-kit/assets", "whisper kit assets (tiktoken, mel filters)")
	out := flag.String("out", ".", "output directory")
	flag.Parse()
	for _, c := range parity.Configs {
		p := filepath.Join(*out, c.Name+".bin")
		if err := parity.Write(c, *assets, p); err != nil {
			fmt.Fprintln(os.Stderr, "whisper-random:", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
