package cuda

import (
	"fmt"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// The launch table: what each dispatch of a plan launches, worked out at
// load. A dispatch without patches launches the same kernels at every
// step, so its launches are checked (bounds, limits, functions, function
// constants) and resolved once; preparing a step only adds its
// dispatches with patches, whose geometry and even functions may follow
// the step variables.

// passTable is one pass's entry.
type passTable struct {
	ops     []opTable
	patched []int  // the ops with patches, in order
	scratch uint64 // the largest per-dispatch scratch of the ops without
	errOp   int    // the first op without patches whose check failed; -1: none
}

// opTable is one dispatch's entry.
type opTable struct {
	fixed  bool        // no patches: recs and consts hold for every step
	recs   []launchRec // fixed: its launches (step 0)
	consts []constSet
	err    error // fixed: its check failed; every step of its pass fails with it
	// memo is the functions of a patched dispatch's last launches: it
	// almost always resolves to the same ones, and comparing names is
	// cheaper than the device's map.
	memo [2]struct {
		name string
		fn   *kernelFunc
	}
}

// buildTable fills e.table. A launch rule's error or a missing function,
// for the step variables all zero, fails the load; a fixed dispatch whose
// bounds or limits fail fails every run of its pass, as before the table.
func (e *Exec) buildTable() error {
	var zero plan.Vars
	e.table = make([]passTable, len(e.passes))
	for pi := range e.passes {
		ps := &e.passes[pi]
		t := &e.table[pi]
		t.ops, t.errOp = make([]opTable, len(ps.Ops)), -1
		for i := range ps.Ops {
			op := &ps.Ops[i]
			r := op.Resolved(&zero)
			ls, err := shaders.LaunchFor(&r, &e.tuning, nil)
			if err == nil {
				err = shaders.ForLayouts(e.layouts, &r, ls)
			}
			if err != nil {
				return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, ps.Name, i, r.Kernel, err)
			}
			for _, l := range ls {
				if _, err := e.b.dev.function(l.Function); err != nil {
					return fmt.Errorf("cuda: plan %s/%s op %d (%s): %w", e.name, ps.Name, i, r.Kernel, err)
				}
			}
			ot := &t.ops[i]
			if op.NPatch > 0 {
				t.patched = append(t.patched, i)
				continue
			}
			ot.fixed = true
			scratch, err := e.addLaunches(&r, op, i, ls, ot, &ot.recs, &ot.consts)
			if err != nil {
				ot.recs, ot.consts, ot.err = nil, nil, err
				if t.errOp < 0 {
					t.errOp = i
				}
				continue
			}
			t.scratch = max(t.scratch, scratch)
		}
	}
	return nil
}

// function is the entry point of MSL function name for launch li of the
// dispatch.
func (t *opTable) function(dev *device, li int, name string) (*kernelFunc, error) {
	if li < len(t.memo) && t.memo[li].fn != nil && t.memo[li].name == name {
		return t.memo[li].fn, nil
	}
	f, err := dev.function(name)
	if err == nil && li < len(t.memo) {
		t.memo[li].name, t.memo[li].fn = name, f
	}
	return f, err
}
