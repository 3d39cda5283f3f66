package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// timings reports, with $HARK_TIMINGS=1, where a command's wall time went:
// the phases of a one-shot run (opening the backend, loading the model,
// each file, closing) as seconds since the command started. A GPU's fixed
// costs (driver, context, kernels, teardown) are a large share of a short
// file's time, and this splits them from the work without a profiler.
type timings struct {
	w      io.Writer // nil: off
	start  time.Time
	last   time.Time
	phases []string
}

func newTimings(w io.Writer) *timings {
	t := &timings{start: time.Now()}
	t.last = t.start
	if os.Getenv("HARK_TIMINGS") == "1" {
		t.w = w
	}
	return t
}

// mark ends the phase name.
func (t *timings) mark(name string) {
	if t.w == nil {
		return
	}
	now := time.Now()
	t.phases = append(t.phases, fmt.Sprintf("%s %.3f", name, now.Sub(t.last).Seconds()))
	t.last = now
}

// note adds a fact to the report (nil or off: nothing).
func (t *timings) note(s string) {
	if t == nil || t.w == nil {
		return
	}
	t.phases = append(t.phases, s)
}

// report prints the phases and the total, once.
func (t *timings) report() {
	if t.w == nil || len(t.phases) == 0 {
		return
	}
	fmt.Fprintf(t.w, "hark: timings (s): %s; total %.3f\n", strings.Join(t.phases, ", "), time.Since(t.start).Seconds())
	t.phases = nil
}
