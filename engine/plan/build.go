package plan

// Helpers shared by the model packages' plan builders.

// Binds packs bindings into a dispatch's binding array.
func Binds(bs ...Binding) (out [MaxBind]Binding, n uint8) {
	copy(out[:], bs)
	return out, uint8(len(bs))
}

// F32At binds buf at an offset counted in float32 elements.
func F32At(buf BufID, floatOff int) Binding {
	return Binding{Buf: buf, Off: uint64(floatOff) * 4}
}

// None is an absent optional binding.
var None = Binding{Buf: NoBuf}

// AddPatch appends a patch to d.
func (d *Dispatch) AddPatch(target PatchTarget, v Var, mul, base int64) {
	d.Patch[d.NPatch] = Patch{Target: target, Var: v, Mul: mul, Base: base}
	d.NPatch++
}

// Weights declares each named weight tensor of a model once as a buffer of
// the plan, however many dispatches bind it.
type Weights struct {
	p   *Plan
	ids map[string]BufID
}

// NewWeights starts a weight table for p.
func NewWeights(p *Plan) *Weights { return &Weights{p: p, ids: map[string]BufID{}} }

// Bind returns the binding of the tensor called name with the given bytes,
// declaring its buffer the first time.
func (w *Weights) Bind(name string, data []byte) Binding {
	id, ok := w.ids[name]
	if !ok {
		id = w.p.AddBuffer(Buffer{Name: name, Kind: BufWeights, Size: int64(len(data)), Data: data})
		w.ids[name] = id
	}
	return Binding{Buf: id}
}

// Stack returns the binding of a weights buffer called name whose content
// is parts laid end to end (Buffer.Parts), declaring it the first time.
func (w *Weights) Stack(name string, parts ...[]byte) Binding {
	id, ok := w.ids[name]
	if !ok {
		b := Buffer{Name: name, Kind: BufWeights, Parts: parts}
		b.Size = b.WeightsLen()
		id = w.p.AddBuffer(b)
		w.ids[name] = id
	}
	return Binding{Buf: id}
}
