package plan

import (
	"errors"
	"fmt"
)

// The checks every backend makes, written once: each backend prefixes the
// error with its name ("cpu: ", "metal: ", ...).

// CheckLoad is the start of a backend's Load: a plan, with no buffer of
// negative size and no nil pass, that Validates.
func CheckLoad(p *Plan) error {
	if p == nil {
		return errors.New("nil plan")
	}
	for i, b := range p.Buffers {
		if b.Size < 0 {
			return fmt.Errorf("plan %s: buffer %d (%q) has negative size %d", p.Name, i, b.Name, b.Size)
		}
		if err := b.checkWeights(); err != nil {
			return fmt.Errorf("plan %s: %w", p.Name, err)
		}
	}
	for _, ps := range p.Passes {
		if ps == nil {
			return fmt.Errorf("plan %s: nil pass", p.Name)
		}
	}
	return p.Validate()
}

// CheckPass is the start of an executable's Run: not closed, and pass one
// of its passes.
func CheckPass(name string, closed bool, pass, passes int) error {
	if closed {
		return fmt.Errorf("plan %s: executable is closed", name)
	}
	if pass < 0 || pass >= passes {
		return fmt.Errorf("plan %s: pass %d out of range (%d passes)", name, pass, passes)
	}
	return nil
}

// RunEach is RunSeq for an executable with nothing to batch: run on every
// step in order, the first failure naming its step.
func RunEach(steps []Vars, run func(*Vars) error) error {
	for i := range steps {
		if err := run(&steps[i]); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}
