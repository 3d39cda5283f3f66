package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/whisper"
)

// QuantizeOptions is what `hark quantize` was asked.
type QuantizeOptions struct {
	Type    ggml.Type
	In, Out string
}

// newQuantizeCmd builds the command; runF, when not nil, replaces
// runQuantize (tests).
func newQuantizeCmd(runF func(*QuantizeOptions) error) *cobra.Command {
	o := &QuantizeOptions{}
	var typeName string
	cmd := &cobra.Command{
		Use:   "quantize --type TYPE IN OUT",
		Short: "Convert a Whisper model (whisper.cpp .bin) to another type",
		Long: `Convert an f32 or f16 whisper.cpp model file to f32, f16, q4_0, q4_1, q5_0,
q5_1 or q8_0. The output is what whisper.cpp's converter (f32, f16) or its
quantize tool (the others) would write, byte for byte: 2-D weights are
quantized, the conv weights keep their type, biases, norms, conv biases and
positional embeddings stay f32.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := ggml.ParseType(typeName)
			if err != nil {
				return err
			}
			o.Type, o.In, o.Out = t, args[0], args[1]
			if runF != nil {
				return runF(o)
			}
			return runQuantize(o)
		},
	}
	var names []string
	for _, t := range whisper.ConvertTypes() {
		names = append(names, t.String())
	}
	cmd.Flags().StringVar(&typeName, "type", "q8_0", "output type: "+strings.Join(names, ", "))
	return cmd
}

// runQuantize writes o.In converted to o.Type as o.Out (whole or not at all).
func runQuantize(o *QuantizeOptions) error {
	src, err := ggmlbin.Open(o.In)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := writeFileAtomic(o.Out, func(w io.Writer) error { return whisper.Convert(w, src, o.Type) }); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	return nil
}
