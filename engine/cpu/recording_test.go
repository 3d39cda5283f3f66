package cpu

import "github.com/harkapp/hark/engine/plan"

// recordingBackend keeps the executor it loads.
type recordingBackend struct {
	*Backend
	ex *Exec
}

func (b *recordingBackend) Load(p *plan.Plan) (plan.Executable, error) {
	x, err := b.Backend.Load(p)
	if err == nil {
		b.ex = x.(*Exec)
	}
	return x, err
}
