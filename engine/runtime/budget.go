package runtime

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// estimate is the memory a model file needs once loaded: its weights as
// stored (mapped or uploaded) plus a quarter for activations, caches and
// scratch buffers. A rough figure; the budget is a guard, not an
// accounting.
func estimate(path string, size int64) int64 { return size + size/4 }

// reserve counts need bytes for e, first unloading the least recently
// used idle models when the budget would be exceeded; it refuses when the
// models in use leave no room. r.mu is held.
func (r *Runtime) reserve(e *entry, need int64) error {
	if r.budget <= 0 {
		e.bytes = need
		return nil
	}
	if need > r.budget {
		return fmt.Errorf("%s needs about %s of memory; the budget for models is %s", filepath.Base(e.key.path), mb(need), mb(r.budget))
	}
	used := int64(0)
	var idle []*entry
	for _, o := range r.entries {
		used += o.bytes
		if o != e && o.model != nil && r.idle(o) {
			idle = append(idle, o)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].lastUsed.Before(idle[j].lastUsed) })
	for len(idle) > 0 && used+need > r.budget {
		used -= idle[0].bytes
		r.unload(idle[0])
		idle = idle[1:]
	}
	if used+need > r.budget {
		var busy []string
		for _, o := range r.entries {
			if o != e && o.bytes > 0 {
				busy = append(busy, filepath.Base(o.key.path))
			}
		}
		sort.Strings(busy)
		return fmt.Errorf("%s needs about %s of memory; the budget for models is %s and %s is held by models in use (%s): try again when they finish, or pick a smaller model",
			filepath.Base(e.key.path), mb(need), mb(r.budget), mb(used), strings.Join(busy, ", "))
	}
	e.bytes = need
	return nil
}

func mb(n int64) string { return fmt.Sprintf("%d MB", (n+500_000)/1_000_000) }
