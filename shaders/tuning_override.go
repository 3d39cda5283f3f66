package shaders

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Override returns t with the knobs named in spec changed: comma-separated
// Field=value pairs of Tuning's uint32 fields ("MatVecRows=2,AttnChunk=64"),
// for measuring other geometries without a rebuild (the GPU backends read
// it from the environment). Values are used as a family's would be (the
// launch rules clamp them); zero is refused, since it means "default" in a
// family and would silently undo nothing.
func Override(t Tuning, spec string) (Tuning, error) {
	if strings.TrimSpace(spec) == "" {
		return t, nil
	}
	v := reflect.ValueOf(&t).Elem()
	for _, kv := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return t, fmt.Errorf("shaders: tuning override %q: want Field=value", kv)
		}
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Uint32 {
			return t, fmt.Errorf("shaders: tuning override: no knob %q", name)
		}
		n, err := strconv.ParseUint(val, 10, 32)
		if err != nil || n == 0 {
			return t, fmt.Errorf("shaders: tuning override %s=%q: want a positive integer", name, val)
		}
		f.SetUint(n)
	}
	t.Family += "+" + spec
	return t, nil
}
