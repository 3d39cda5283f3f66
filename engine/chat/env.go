package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/parser"
)

// hfConfig is the Jinja configuration of Hugging Face's
// apply_chat_template: trim_blocks and lstrip_blocks on, the trailing
// newline of the source dropped.
func hfConfig() *config.Config {
	c := config.New()
	c.TrimBlocks = true
	c.LeftStripBlocks = true
	c.KeepTrailingNewline = false
	return c
}

// newEnvironment builds a private Jinja environment: gonja's builtins plus
// the globals and filters Hugging Face adds for chat templates
// (strftime_now, a Python-compatible tojson; raise_exception is set per
// rendering so its message survives gonja's error wrapping). The
// package-wide gonja environment is left untouched.
func newEnvironment(now func() time.Time) *exec.Environment {
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	_ = filters.Replace("tojson", filterToJSON)
	ctx := exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables)
	ctx.Set("strftime_now", func(format string) string {
		return strftime(now(), format)
	})
	ctx.Set("range", boundedRange)
	return &exec.Environment{
		Context:           ctx,
		Filters:           filters,
		Tests:             exec.NewTestSet(map[string]exec.TestFunction{}).Update(builtins.Tests),
		ControlStructures: exec.NewControlStructureSet(map[string]parser.ControlStructureParser{}).Update(builtins.ControlStructures),
		Methods:           builtins.Methods,
	}
}

// maxRange bounds range(): gonja materialises a loop's items before
// running it, so range(10**9) would exhaust memory before any output cap
// applies. Chat templates use range for a handful of items.
const maxRange = 100_000

// boundedRange is Python's range([start,] stop[, step]) as a list, at most
// maxRange items.
func boundedRange(args ...int) ([]int, error) {
	start, stop, step := 0, 0, 1
	switch len(args) {
	case 1:
		stop = args[0]
	case 2:
		start, stop = args[0], args[1]
	case 3:
		start, stop, step = args[0], args[1], args[2]
	default:
		return nil, fmt.Errorf("range expects 1 to 3 integers, got %d", len(args))
	}
	if step == 0 {
		return nil, errors.New("range step cannot be 0")
	}
	var n int
	switch {
	case step > 0 && stop > start:
		n = (stop - start + step - 1) / step
	case step < 0 && stop < start:
		n = (start - stop - step - 1) / -step
	}
	if n > maxRange {
		return nil, fmt.Errorf("range of %d items is more than %d", n, maxRange)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}

// strftime formats t with the C strftime directives templates use
// (Llama 3.1's "%d %b %Y"); unknown directives are kept verbatim.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
