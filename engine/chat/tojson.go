package chat

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// filterToJSON is Hugging Face's tojson for chat templates: Python's
// json.dumps with ensure_ascii=False and the default ", " / ": "
// separators (or newline + indent when indent is given), so tool
// definitions render as they do in transformers. Go maps have no
// insertion order, so object keys are sorted.
func filterToJSON(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	indent := -1
	if v, ok := params.KwArgs["indent"]; ok && !v.IsNil() {
		if !v.IsInteger() {
			return exec.AsValue(fmt.Errorf("tojson: indent must be an integer, got %s", v.String()))
		}
		indent = v.Integer()
	}
	var b strings.Builder
	if err := writeJSON(&b, reflect.ValueOf(in.Interface()), indent, 0); err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(b.String())
}

// maxJSONDepth stops a self-referencing value from recursing forever.
const maxJSONDepth = 100

func writeJSON(b *strings.Builder, v reflect.Value, indent, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("tojson: value nested deeper than %d", maxJSONDepth)
	}
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if ev, ok := v.Interface().(*exec.Value); ok {
			v = reflect.ValueOf(ev.Interface())
			continue
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		b.WriteString("null")
		return nil
	}
	sep := func(level int) {
		if indent >= 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*level))
		}
	}
	item := ", "
	if indent >= 0 {
		item = ","
	}
	switch v.Kind() {
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			b.WriteString("NaN")
		case math.IsInf(f, 1):
			b.WriteString("Infinity")
		case math.IsInf(f, -1):
			b.WriteString("-Infinity")
		case f == math.Trunc(f) && math.Abs(f) < 1e16:
			b.WriteString(strconv.FormatFloat(f, 'f', 1, 64)) // Python prints 1.0
		default:
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case reflect.String:
		writeJSONString(b, v.String())
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteString(item)
			}
			sep(depth + 1)
			if err := writeJSON(b, v.Index(i), indent, depth+1); err != nil {
				return err
			}
		}
		sep(depth)
		b.WriteByte(']')
	case reflect.Map:
		if v.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k.Interface())
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, c int) int { return strings.Compare(names[a], names[c]) })
		b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				b.WriteString(item)
			}
			sep(depth + 1)
			writeJSONString(b, names[i])
			b.WriteString(": ")
			if err := writeJSON(b, v.MapIndex(keys[i]), indent, depth+1); err != nil {
				return err
			}
		}
		sep(depth)
		b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: cannot encode a %s", v.Kind())
	}
	return nil
}

// writeJSONString quotes s as Python's json.dumps(ensure_ascii=False)
// does: only quotes, backslashes and control characters are escaped.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
