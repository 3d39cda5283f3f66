package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/harkapp/hark/engine/chat"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/modelfile"
	"github.com/spf13/cobra"
)

// InspectOptions is what `hark inspect` was asked.
type InspectOptions struct {
	File string
	JSON bool
	Out  io.Writer
}

// newInspectCmd builds the command; runF, when not nil, replaces
// runInspect (tests).
func newInspectCmd(runF func(*InspectOptions) error) *cobra.Command {
	o := &InspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Describe a model file (GGUF or whisper.cpp GGML): metadata, tokenizer, tensors",
		Long: `Describe a model file: format, architecture, hyper-parameters, tokenizer summary
and the tensor table (name, ggml type, shape in ggml order, bytes).

--json prints one object: format ("gguf" or "ggml"), architecture, metadata
(arrays longer than 16 elements summarised as {"type", "len"}), and tensors,
each with name, type (ggml's lower-case name), shape (ggml order, innermost
first), offset (absolute byte offset of the tensor's data in the file) and
bytes. For whisper.cpp files the metadata holds the hyper-parameters as
whisper.<name>, the mel filter bank's shape and the number of stored tokens.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File, o.Out = args[0], cmd.OutOrStdout()
			if runF != nil {
				return runF(o)
			}
			return runInspect(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print one JSON object")
	return cmd
}

// runInspect describes o.File on o.Out.
func runInspect(o *InspectOptions) error {
	f, err := modelfile.Open(o.File)
	if err != nil {
		return err
	}
	defer f.Close()
	if o.JSON {
		return inspectJSON(o.Out, f)
	}
	return inspectText(o.Out, f)
}

func inspectJSON(w io.Writer, f *modelfile.File) error {
	tensors := f.Tensors
	if tensors == nil {
		tensors = []modelfile.Tensor{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	var tplErr string
	if f.GGUF != nil {
		if err := chat.CheckModel(f.GGUF); err != nil {
			tplErr = err.Error()
		}
	}
	return enc.Encode(struct {
		Format       modelfile.Format   `json:"format"`
		Architecture string             `json:"architecture"`
		Metadata     map[string]any     `json:"metadata"`
		Tensors      []modelfile.Tensor `json:"tensors"`
		// ChatTemplateError says why the model's chat template is unusable.
		ChatTemplateError string `json:"chat_template_error,omitempty"`
	}{f.Format, f.Architecture, f.MetadataMap(), tensors, tplErr})
}

func inspectText(out io.Writer, f *modelfile.File) error {
	w := &errWriter{w: out}
	fmt.Fprintf(w, "file:          %s\n", f.Path)
	switch {
	case f.GGUF != nil:
		fmt.Fprintf(w, "format:        gguf (version %d, alignment %d)\n", f.GGUF.Version, f.GGUF.Alignment)
	case f.GGML != nil:
		fmt.Fprintf(w, "format:        ggml (whisper.cpp)\n")
	}
	fmt.Fprintf(w, "architecture:  %s\n", orNone(f.Architecture))

	// Hyper-parameters are the architecture's own keys; the tokenizer's
	// keys are summarised below; everything else is general metadata.
	var hparams, other, tokExtra []modelfile.Entry
	prefix := f.Architecture + "."
	for _, e := range f.Metadata {
		switch {
		case f.Architecture != "" && strings.HasPrefix(e.Key, prefix):
			hparams = append(hparams, e)
		case strings.HasPrefix(e.Key, "tokenizer."):
			if !summarisedTokenizerKey(e.Key) {
				tokExtra = append(tokExtra, e)
			}
		default:
			other = append(other, e)
		}
	}
	printEntries(w, "hyper-parameters", hparams)
	printEntries(w, "metadata", other)

	if tok := f.Tokenizer; tok != nil {
		fmt.Fprintf(w, "\ntokenizer:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  model\t%s\n", orNone(tok.Model))
		if tok.Pre != "" {
			fmt.Fprintf(tw, "  pre-tokenizer\t%s\n", tok.Pre)
		}
		fmt.Fprintf(tw, "  vocabulary\t%d\n", tok.VocabSize)
		if tok.Tokens != tok.VocabSize {
			fmt.Fprintf(tw, "  stored tokens\t%d\n", tok.Tokens)
		}
		if tok.Merges > 0 {
			fmt.Fprintf(tw, "  merges\t%d\n", tok.Merges)
		}
		if tok.Scores > 0 {
			fmt.Fprintf(tw, "  scores\t%d\n", tok.Scores)
		}
		if tok.TokenTypes > 0 {
			fmt.Fprintf(tw, "  token types\t%d\n", tok.TokenTypes)
		}
		if len(tok.Special) > 0 {
			var ids []string
			for _, k := range slices.Sorted(maps.Keys(tok.Special)) {
				ids = append(ids, fmt.Sprintf("%s=%d", k, tok.Special[k]))
			}
			fmt.Fprintf(tw, "  special ids\t%s\n", strings.Join(ids, " "))
		}
		for _, e := range tokExtra {
			fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimPrefix(strings.TrimPrefix(e.Key, "tokenizer."), "ggml."), valueString(e.Value))
		}
		if f.GGUF != nil {
			if v, ok := f.GGUF.Get(chat.GGUFKey); ok {
				src, _ := v.String()
				state := "parses"
				if err := chat.CheckModel(f.GGUF); err != nil {
					state = "UNUSABLE: " + err.Error()
				}
				fmt.Fprintf(tw, "  chat template\t%d bytes, %s\n", len(src), state)
			}
		}
		tw.Flush()
	}

	fmt.Fprintf(w, "\ntensors: %d\n", len(f.Tensors))
	if len(f.Tensors) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  name\ttype\tshape\tbytes\n")
		byType := map[ggml.Type]int{}
		for _, t := range f.Tensors {
			byType[t.Type]++
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\n", t.Name, t.Type, shapeString(t.Shape), t.Bytes)
		}
		tw.Flush()
		var types []string
		for _, t := range slices.Sorted(maps.Keys(byType)) {
			types = append(types, fmt.Sprintf("%s %d", t, byType[t]))
		}
		fmt.Fprintf(w, "total: %d tensors (%s), %d elements, %d bytes (%s)\n",
			len(f.Tensors), strings.Join(types, ", "), f.TotalElements(), f.TotalBytes(), humanBytes(f.TotalBytes()))
	}
	return w.err
}

// summarisedTokenizerKey reports whether the tokenizer summary already
// covers a metadata key.
func summarisedTokenizerKey(key string) bool {
	switch key {
	case "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
		"tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.tokens":
		return true
	}
	return strings.HasPrefix(key, "tokenizer.ggml.") && strings.HasSuffix(key, "_token_id")
}

func printEntries(w io.Writer, title string, entries []modelfile.Entry) {
	if len(entries) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range entries {
		fmt.Fprintf(tw, "  %s\t%s\n", e.Key, valueString(e.Value))
	}
	tw.Flush()
}

// valueString prints a summarised metadata value on one line.
func valueString(v any) string {
	switch x := v.(type) {
	case string:
		return quoteShort(x, 80)
	case []int64:
		return shapeString(x)
	case modelfile.ArraySummary:
		return fmt.Sprintf("[%d × %s]", x.Len, x.Type)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = valueString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// quoteShort quotes s, cutting it (with its length noted) when longer than n.
func quoteShort(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // cut between characters
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:n], len(s))
}

func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), 0
	for f >= unit && u < 4 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGT"[u-1])
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// errWriter remembers the first write error so that a closed stdout makes
// the command fail.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
