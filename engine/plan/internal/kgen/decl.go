// Package kgen holds the kernel contract's single declaration and the
// generator that writes every form of it the backends use: the typed
// argument records of package plan (engine/plan/kernels_gen.go), the
// shader-language header (shaders/kargs.h) and the kernel table of
// engine/README.md. Run `go generate ./engine/plan` after changing Kernels.
package kgen

// Role says what a kernel does to a binding.
type Role int

const (
	In    Role = iota // read
	Out               // written (not read)
	InOut             // read and written
)

// Elem is a binding's element type.
type Elem string

const (
	F32   Elem = "f32"
	I32   Elem = "i32"
	Typed Elem = "Type" // the dispatch's Type (weights, table, KV cache)
	F16   Elem = "f16"
)

// Bind is one buffer argument. Its slot is its index in Kernel.Binds.
// Every binding's byte offset may be patched per step.
type Bind struct {
	Name string // Go field name; the C and slot names derive from it
	Role Role
	Opt  bool // may be NoBuf
	Elem Elem
	// Span is a Go expression (package plan, over the decoded args a and
	// the dispatch d) giving the byte span the kernel may touch from the
	// binding's offset: a value of type span.
	Span string
	// ReadIf, for an output, is a Go expression that makes it read too.
	ReadIf string
	Doc    string
}

// Kind is a params field's type.
type Kind int

const (
	U32  Kind = iota // one word, an unsigned count, stride or index (Go int)
	F32v             // one word holding a float32's bits
	Bits             // one word of flags or a mode (Go uint32)
	U64              // two words, low first (Go uint64)
)

// Param is one named field of the params block; fields take words in
// order.
type Param struct {
	Name  string
	Kind  Kind
	Patch bool // a named patch target (U32 only)
	// Enum, for a Bits field, names the Enums entry whose values it holds
	// (the Go field then has that type).
	Enum string
	Doc  string
}

// Check is a validation every backend applies to a resolved dispatch:
// when Fail (a Go expression over a) holds, the dispatch is rejected with
// Msg formatted with Args.
type Check struct {
	Fail string
	Msg  string
	Args string
}

// Kernel declares one kernel of the set.
type Kernel struct {
	Name   string // Go name (plan.<Name> is the Kernel id, plan.<Name>Args its record)
	Fn     string // name in MSL and messages
	Doc    string // semantics, as the contract states them
	Binds  []Bind
	Params []Param
	Grid   [3]string // Go expressions over a: the logical work shape
	Checks []Check
	// Typed says the dispatch's Type is part of the record.
	Typed bool
	// Families are the layouts (Families) the kernel shares with others;
	// the generator checks that it has each one's fields in place.
	Families []string
}

// Family is a layout several kernels share: the first bindings and the
// first params words of each member, with the same roles, elements and
// kinds (and the dispatch's Type where the family is Typed). Code that treats every member alike (a product's weights and
// output rows, a norm's rows) decodes the family's record
// (plan.Decode<Family>, which accepts members only), patches the family's
// targets (plan.Patch<Family><Field>) and reads the family's C struct
// (args.<fn>.<field>), instead of borrowing one member's.
type Family struct {
	Name string // Go name: plan.<Name>Args, plan.Decode<Name>, plan.Family<Name>
	Fn   string // C name: struct <fn>_args, the Args union's member <fn>
	Doc  string
	// Binds and Params are the shared prefix. Aliases name a member's own
	// name for a field where it differs (the gated products' Gate is the
	// family's X).
	Binds   []Bind
	Params  []Param
	Aliases map[string]string // member field name -> family field name
	Typed   bool
}

// Families are the declared layout families.
var Families = []Family{
	{Name: "Product", Fn: "product", Typed: true,
		Doc:     "the layout every matrix product shares (MatVec, MatMul and the fused forms): weights, the activation input (x, or the gate of the gated forms), output, bias and residual, with their sizes and strides",
		Binds:   productBinds(),
		Params:  productParams(),
		Aliases: map[string]string{"Gate": "X", "Ldg": "Ldx"}},
	{Name: "Gated", Fn: "gated", Typed: true,
		Doc:    "the layout of the gated down projections (SiLUMulMatVec, GELUMulMatVec): Product's, with gate for x, and up",
		Binds:  gatedProductBinds(),
		Params: gatedProductParams()},
	{Name: "Norm", Fn: "norm",
		Doc: "the layout RMSNorm and LayerNorm share: input and weight, the row size and count, strides and epsilon",
		Binds: []Bind{
			{Name: "X", Elem: F32, Doc: "rows of dim (RMSNorm addresses them in groups)"},
			{Name: "W", Opt: true, Elem: F32, Doc: "f32[dim]; NoBuf for no scale"},
		},
		Params: []Param{{Name: "Dim"}, {Name: "Rows", Patch: true}, {Name: "Ldx"}, {Name: "Ldo"}, {Name: "Eps", Kind: F32v}}},
	{Name: "Binary", Fn: "binary",
		Doc: "the layout of the two-input row-wise kernels (SiLUMul, GELUMul, Add): out = f(a, b) over m rows of n, with the three row strides",
		Binds: []Bind{
			{Name: "A", Elem: F32, Doc: "first input (the gate of SiLUMul and GELUMul)"},
			{Name: "B", Elem: F32, Doc: "second input (their up)"},
			{Name: "Out", Role: Out, Elem: F32},
		},
		Params:  []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Lda"}, {Name: "Ldb"}, {Name: "Ldo"}},
		Aliases: map[string]string{"Gate": "A", "Up": "B", "Ldg": "Lda", "Ldu": "Ldb"}},
	{Name: "Attend", Fn: "attend",
		Doc:    "the layout Attention and RopeAttention share: the query rows and the cache geometry an attention kernel reads (shaders' attention_impl reads both through it)",
		Binds:  []Bind{{Name: "Q", Elem: F32}},
		Params: attendParams(),
		Typed:  true},
	{Name: "Rows", Fn: "rows",
		Doc:    "the layout of the row-wise kernels: n values in each of m rows, the first two params words",
		Params: []Param{{Name: "N", Doc: "values per row"}, {Name: "M", Patch: true, Doc: "rows"}}},
}

// Enum is a mode: a params word that holds one of a few named values.
// It becomes a Go type with its constants and a Valid method, and C
// defines.
type Enum struct {
	Name   string // Go type in package plan
	Doc    string
	Values []Const
}

// Enums are the declared modes.
var Enums = []Enum{
	{Name: "Activation", Doc: "the activation function of GELU (its Mode)", Values: []Const{
		{"ActGELUErf", "KACT_GELU_ERF", 0, "exact GELU (erf), as PyTorch's nn.GELU"},
		{"ActGELUTanh", "KACT_GELU_TANH", 1, "GELU's tanh approximation (gelu_pytorch_tanh)"},
	}},
	{Name: "RopeMode", Doc: "the pairs RoPE rotates (Rope's and RopeKV's Mode; ggml's mode numbers)", Values: []Const{
		{"RopeNormal", "KROPE_NORMAL", 0, "rope pairs (2i, 2i+1), as ggml's mode 0"},
		{"RopeNeoX", "KROPE_NEOX", 2, "rope pairs (i, i+ropeDim/2), as ggml's mode 2"},
	}},
}

// Flag and mode constants shared by several kernels.
type Const struct {
	Name  string // Go name in package plan
	C     string // name in the C header
	Value int
	Doc   string
}

var Consts = []Const{
	{"FlagAccumulate", "KFLAG_ACCUMULATE", 1 << 0, "Embed: add into out"},
	{"FlagCausal", "KFLAG_CAUSAL", 1 << 0, "Attention: causal mask"},
	{"FlagChannelMaj", "KFLAG_CHANNEL_MAJOR", 1 << 0, "Conv1D: x is channel-major"},
	{"FlagPerSeqRows", "KFLAG_PER_SEQ_ROWS", 1 << 1, "Rope, RopeKV, Attention: row t is sequence t"},
	{"BeamCopyMaxSeqs", "KBEAM_COPY_MAX_SEQS", 16, "BeamCopy: the most sequences (a GPU thread holds one element of each)"},
	{"FlagTimestamps", "KFLAG_TIMESTAMPS", 1 << 0, "WhisperFilter: apply the timestamp rules"},
	{"FlagTrackStart", "KFLAG_TRACK_START", 1 << 0, "WhisperTrack: start a window (reset the state, record the no-speech log-probability)"},
	{"FlagGELUOut", "KFLAG_GELU_OUT", 1 << 0, "MatVec: out = gelu_erf(x·Wᵀ + bias), no residual (an MLP's up product with its activation, issue #34)"},
	{"TrackHeader", "KTRACK_HEADER", 8, "WhisperTrack: words of state before the tokens"},
	{"TrackRepeatMaxUnit", "KTRACK_REPEAT_MAX_UNIT", 32, "WhisperTrack: the longest repeated unit the repetition guard looks for"},
	{"BeamsHeader", "KBEAMS_HEADER", 8, "WhisperBeams: words of state before the beams' sums"},
	{"BeamsMax", "KBEAMS_MAX", 16, "WhisperBeams: the most beams (one threadgroup ranks their candidates in its memory)"},
	{"AlignMaxPath", "KALIGN_MAX_PATH", 1023, "WhisperAlign: the most token rows aligned (a GPU thread a row, and one for the border)"},
	{"AlignMaxWidth", "KALIGN_MAX_WIDTH", 15, "WhisperAlign: the widest median filter"},
}

// products are the bindings and params shared by MatVec, MatMul and the
// fused forms.
func productBinds(extra ...Bind) []Bind {
	b := []Bind{
		{Name: "W", Elem: Typed, Span: "weightRows(d.Type, a.N, a.K)", Doc: "weights, n rows of k"},
		{Name: "X", Elem: F32, Span: "f32Rows(a.M, a.Ldx, a.K)", Doc: "activations, m rows of k"},
		{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, a.N)", Doc: "m rows of n"},
		{Name: "Bias", Opt: true, Elem: F32, Span: "f32Vec(a.N)", Doc: "f32[n]"},
		{Name: "Res", Opt: true, Elem: F32, Span: "f32Rows(a.M, a.Ldr, a.N)", Doc: "residual added to the result; may alias out"},
	}
	return append(b, extra...)
}

// productFlags is MatVec's (and MatMul's, always 0) last params word.
var productFlags = Param{Name: "Flags", Kind: Bits, Doc: "FlagGELUOut (MatVec only)"}

func productParams(extra ...Param) []Param {
	p := []Param{
		{Name: "N", Doc: "output columns (weight rows)"},
		{Name: "K", Doc: "inner dimension"},
		{Name: "M", Patch: true, Doc: "rows"},
		{Name: "Ldx", Doc: "row stride of x"},
		{Name: "Ldo", Doc: "row stride of out"},
		{Name: "Ldr", Doc: "row stride of res"},
	}
	return append(p, extra...)
}

// pagedChecks are the block-pool checks of RopeKVPaged and
// AttentionPaged.
func pagedChecks() []Check {
	return []Check{
		{Fail: "a.M > 0 && (a.BlockSize == 0 || a.TableStride == 0)", Msg: "block size %d, table stride %d", Args: "a.BlockSize, a.TableStride"},
		{Fail: "a.M > 0 && a.NKV > 0 && a.BlockStride < mul(a.NKV-1, a.HeadStride)+mul(a.BlockSize-1, a.PosStride)+a.HeadDim",
			Msg: "block stride %d smaller than a block (%d slots, head stride %d, position stride %d)", Args: "a.BlockStride, a.BlockSize, a.HeadStride, a.PosStride"},
		{Fail: "a.BlockSize > 1 && a.PosStride < a.HeadDim", Msg: "position stride %d smaller than head size %d", Args: "a.PosStride, a.HeadDim"},
	}
}

// ropeChecks are the rotation checks of Rope and RopeKV (both have
// HeadDim, Mode and RotDims).
// attendParams are the params Attention and RopeAttention share (the
// Attend family).
func attendParams() []Param {
	return []Param{{Name: "HeadDim"}, {Name: "NHead"}, {Name: "NKV"}, {Name: "M", Patch: true}, {Name: "Ldq"}, {Name: "Ldo"},
		{Name: "KVLen", Patch: true}, {Name: "Pos0", Patch: true}, {Name: "Flags", Kind: Bits, Doc: "FlagCausal, FlagPerSeqRows"},
		{Name: "Scale", Kind: F32v}, {Name: "HeadStride"}, {Name: "PosStride"}, {Name: "SeqStride"}}
}

// ropeAttentionParams are RopeAttention's params, RopeAttentionMatVec's too
// (its attention launches read them as RopeAttention's).
func ropeAttentionParams() []Param {
	return append(attendParams(),
		Param{Name: "Window", Doc: "sliding window (0 = all keys)"},
		Param{Name: "Mode", Kind: Bits, Enum: "RopeMode"}, Param{Name: "RopeDim", Doc: "rotated dims (0 means headDim)"})
}

// headsCheck: the query heads share the KV heads evenly.
var headsCheck = Check{Fail: "a.M > 0 && a.NHead > 0 && (a.NKV == 0 || a.NHead%a.NKV != 0)",
	Msg: "%d query heads cannot share %d KV heads (head size %d)", Args: "a.NHead, a.NKV, a.HeadDim"}

func ropeChecks() []Check {
	return []Check{
		{Fail: "a.HeadDim == 0", Msg: "head size 0"},
		{Fail: "a.RotDims() > a.HeadDim || a.RotDims()%2 != 0",
			Msg: "rope dims %d must be even and at most the head size %d", Args: "a.RotDims(), a.HeadDim"},
		{Fail: "!a.Mode.Valid()", Msg: "unknown rope mode %d", Args: "a.Mode"},
	}
}

var rowsNM = [3]string{"a.N", "a.M", "1"}

// elementwise are the two-binding row kernels (x -> out, m rows of n).
func elementwise(name, fn, doc string, last Param) Kernel {
	return Kernel{Name: name, Fn: fn, Doc: doc, Families: []string{"Rows"},
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "f32Rows(a.M, a.Ldx, a.N)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, a.N)", Doc: "may alias x"},
		},
		Params: []Param{{Name: "N", Doc: "columns"}, {Name: "M", Patch: true, Doc: "rows"}, {Name: "Ldx"}, {Name: "Ldo"}, last},
		Grid:   rowsNM,
	}
}

// gatedMul is a gated activation of a feed-forward block:
// out = act(gate) ⊙ up.
func gatedMul(name, fn, act string) Kernel {
	return Kernel{Name: name, Fn: fn, Families: []string{"Rows", "Binary"},
		Doc: "out[m, n] = " + act + "(gate) ⊙ up.",
		Binds: []Bind{
			{Name: "Gate", Elem: F32, Span: "f32Rows(a.M, a.Ldg, a.N)"},
			{Name: "Up", Elem: F32, Span: "f32Rows(a.M, a.Ldu, a.N)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, a.N)"},
		},
		Params: []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Ldg"}, {Name: "Ldu"}, {Name: "Ldo"}},
		Grid:   rowsNM,
	}
}

// gatedMulMatVec is the feed-forward down projection with its gated
// activation fused in: out = (act(gate) ⊙ up)·Wᵀ + bias + res.
func gatedMulMatVec(name, fn, act string) Kernel {
	return Kernel{Name: name, Fn: fn, Typed: true, Families: []string{"Product", "Gated"},
		Doc:   "out = (" + act + "(gate) ⊙ up)·Wᵀ + bias + res (the FFN down projection with its activation fused in).",
		Binds: gatedProductBinds(), Params: gatedProductParams(), Grid: rowsNM}
}

// gatedProductBinds are the bindings of the gated down projections:
// Product's with gate for x, then up.
func gatedProductBinds() []Bind {
	b := productBinds(Bind{Name: "Up", Elem: F32, Span: "f32Rows(a.M, a.Ldu, a.K)"})
	b[1] = Bind{Name: "Gate", Elem: F32, Span: "f32Rows(a.M, a.Ldg, a.K)"}
	return b
}

func gatedProductParams() []Param {
	p := productParams(Param{Name: "Ldu", Doc: "row stride of up"})
	p[3] = Param{Name: "Ldg", Doc: "row stride of gate"}
	return p
}

// Kernels is the kernel set, in id order (plan.Embed is 1).
var Kernels = []Kernel{
	{Name: "Embed", Fn: "embed", Typed: true,
		Doc: "out[t, :] (+)= table[ids[t], :] (+ add[t·lda, :] where add is bound: Whisper's positional embedding, in the same launch).",
		Binds: []Bind{
			{Name: "Table", Elem: Typed, Span: "toEnd(typedRowsTouched(d.Type, a.N, a.Dim))", Doc: "rows of dim elements"},
			{Name: "Ids", Elem: I32, Span: "i32Vec(a.N)", Doc: "token ids"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.N, a.Ldo, a.Dim)", ReadIf: "a.Flags&FlagAccumulate != 0"},
			{Name: "Add", Opt: true, Elem: F32, Span: "broadcastRows(a.N, a.Lda, a.Dim)", Doc: "rows added to the result; NoBuf for none"},
		},
		Params: []Param{{Name: "Dim"}, {Name: "N", Patch: true, Doc: "tokens"}, {Name: "Ldo"},
			{Name: "Flags", Kind: Bits, Doc: "FlagAccumulate: add into out"},
			{Name: "Lda", Doc: "row stride of add (0: its first row for every token)"}},
		Grid: [3]string{"a.N", "1", "1"},
	},
	{Name: "RMSNorm", Fn: "rms_norm", Families: []string{"Norm"},
		Doc: "out[r] = x[r] / sqrt(mean(x[r]²) + eps) ⊙ w. Rows are addressed in groups so per-head norms can work inside a fused QKV row: row r lives at (r/inner)*ld + (r%inner)*dim.",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "groupedRows(a.Rows, a.Inner, a.Dim, a.Ldx)"},
			{Name: "W", Opt: true, Elem: F32, Span: "f32Vec(a.Dim)", Doc: "f32[dim]; NoBuf for no scale"},
			{Name: "Out", Role: Out, Elem: F32, Span: "groupedRows(a.Rows, a.Inner, a.Dim, a.Ldo)", Doc: "may alias x"},
		},
		Params: []Param{{Name: "Dim"}, {Name: "Rows", Patch: true}, {Name: "Ldx"}, {Name: "Ldo"},
			{Name: "Eps", Kind: F32v}, {Name: "Inner", Doc: "rows per group (0 means 1)"}},
		Grid: [3]string{"a.Rows", "1", "1"},
		Checks: []Check{{
			Fail: "a.Rows > max(1, a.Inner) && (a.Ldx < mul(max(1, a.Inner), a.Dim) || a.Ldo < mul(max(1, a.Inner), a.Dim))",
			Msg:  "row stride (%d, %d) smaller than %d heads of %d", Args: "a.Ldx, a.Ldo, max(1, a.Inner), a.Dim"}},
	},
	{Name: "LayerNorm", Fn: "layer_norm", Families: []string{"Norm"},
		Doc: "out[r] = (x[r]-mean)/sqrt(var+eps) ⊙ w + b (biased variance).",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "f32Rows(a.Rows, a.Ldx, a.Dim)"},
			{Name: "W", Opt: true, Elem: F32, Span: "f32Vec(a.Dim)"},
			{Name: "B", Opt: true, Elem: F32, Span: "f32Vec(a.Dim)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.Rows, a.Ldo, a.Dim)", Doc: "may alias x"},
		},
		Params: []Param{{Name: "Dim"}, {Name: "Rows", Patch: true}, {Name: "Ldx"}, {Name: "Ldo"}, {Name: "Eps", Kind: F32v}},
		Grid:   [3]string{"a.Rows", "1", "1"},
		Checks: []Check{{Fail: "a.Rows > 1 && (a.Ldx < a.Dim || a.Ldo < a.Dim)",
			Msg: "row stride (%d, %d) smaller than dim %d", Args: "a.Ldx, a.Ldo, a.Dim"}},
	},
	{Name: "MatVec", Fn: "mat_vec", Typed: true, Families: []string{"Product"},
		Doc:   "out[m, n] = x[m, k]·W[n, k]ᵀ + bias[n] + res[m, n], chosen by model code for small m (decode, beams as m sequences). Quantized W is multiplied block by block against x quantized to Type's activation format (ggml's vec_dot formulas). With FlagGELUOut, out = gelu_erf(x·Wᵀ + bias) + res.",
		Binds: productBinds(), Params: productParams(productFlags), Grid: rowsNM,
		Checks: []Check{{Fail: "a.Flags&^FlagGELUOut != 0", Msg: "unknown flags %#x", Args: "a.Flags"},
			{Fail: "a.Flags&FlagGELUOut != 0 && a.Res.Buf != NoBuf", Msg: "FlagGELUOut with a residual (flags %#x)", Args: "a.Flags"}}},
	{Name: "MatMul", Fn: "mat_mul", Typed: true, Families: []string{"Product"},
		Doc:   "As MatVec, chosen for prefill chunks and encoder windows, so GPU backends can pick their kernel when the plan is built. It takes no flags (MatVec's word, so that the two argument structs convert).",
		Binds: productBinds(), Params: productParams(productFlags), Grid: rowsNM,
		Checks: []Check{{Fail: "a.Flags != 0", Msg: "flags %#x (MatMul takes none)", Args: "a.Flags"}}},
	{Name: "RMSNormMatVec", Fn: "rms_norm_mat_vec", Typed: true, Families: []string{"Product"},
		Doc: "out = (rmsnorm(x) ⊙ g)·Wᵀ + bias + res, one pass.",
		Binds: func() []Bind {
			return productBinds(Bind{Name: "G", Elem: F32, Span: "f32Vec(a.K)", Doc: "norm weight f32[k]"})
		}(),
		Params: productParams(Param{Name: "Eps", Kind: F32v}), Grid: rowsNM},
	gatedMul("SiLUMul", "silu_mul", "silu"),
	gatedMulMatVec("SiLUMulMatVec", "silu_mul_mat_vec", "silu"),
	func() Kernel {
		k := elementwise("GELU", "gelu", "out = gelu(x) over m rows of n.",
			Param{Name: "Mode", Kind: Bits, Enum: "Activation", Doc: "ActGELUErf or ActGELUTanh"})
		k.Checks = []Check{{Fail: "!a.Mode.Valid()", Msg: "unknown GELU mode %d", Args: "a.Mode"}}
		return k
	}(),
	{Name: "Add", Fn: "add", Families: []string{"Rows", "Binary"},
		Doc: "out = a + b. ldb == 0 broadcasts b's first row to every row.",
		Binds: []Bind{
			{Name: "A", Elem: F32, Span: "f32Rows(a.M, a.Lda, a.N)"},
			{Name: "B", Elem: F32, Span: "broadcastRows(a.M, a.Ldb, a.N)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, a.N)", Doc: "may alias a"},
		},
		Params: []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Lda"}, {Name: "Ldb"}, {Name: "Ldo"}},
		Grid:   rowsNM,
	},
	elementwise("Scale", "scale", "out = x * scale.", Param{Name: "Scale", Kind: F32v}),
	{Name: "Rope", Fn: "rope",
		Doc: "Rotates heads in place. Token t is at position pos0+t (or pos0 for every row with FlagPerSeqRows). Pair (a, b) is (2i, 2i+1) in normal mode and (i, i+ropeDim/2) in NeoX mode; angle = pos * freqs[i]; dims at or past ropeDim are untouched.",
		Binds: []Bind{
			{Name: "X", Role: InOut, Elem: F32, Span: "f32Rows(a.M, a.Ldx, mul(a.NHead, a.HeadDim))"},
			{Name: "Freqs", Opt: true, Elem: F32, Span: "f32Vec(a.RopeDim / 2)", Doc: "f32[ropeDim/2], inverse frequencies after any context scaling"},
		},
		Params: []Param{{Name: "HeadDim"}, {Name: "NHead"}, {Name: "M", Patch: true}, {Name: "Ldx"}, {Name: "Pos0", Patch: true},
			{Name: "Mode", Kind: Bits, Enum: "RopeMode", Doc: "RopeNormal or RopeNeoX"}, {Name: "RopeDim", Doc: "rotated dims (0 means headDim)"},
			{Name: "Flags", Kind: Bits, Doc: "FlagPerSeqRows"}, {Name: "MScale", Kind: F32v, Doc: "0 means 1"}},
		Grid: [3]string{"a.M", "a.NHead", "1"},
		Checks: append(ropeChecks(),
			Check{Fail: "a.M > 1 && a.Ldx < mul(a.NHead, a.HeadDim)",
				Msg: "row stride %d smaller than %d heads of %d", Args: "a.Ldx, a.NHead, a.HeadDim"}),
	},
	{Name: "RopeKV", Fn: "rope_kv", Typed: true,
		Doc: "For m rows of a fused QKV buffer (Q: nHead heads at column 0, K: nKV heads after Q, V: nKV heads after K), rotate Q in place and rotate K (as Rope; freqs NoBuf = no rotation), then store K and V for each row into the caches (Type f16 or f32). The rotated K is also written back into the qkv row. Cache element (seq s, kv head h, position p, dim i) is at s*seqStride + h*headStride + p*posStride + i. Rows are consecutive positions pos0+t of sequence 0, or, with FlagPerSeqRows, sequence t at position pos0.",
		Binds: []Bind{
			{Name: "QKV", Role: InOut, Elem: F32, Span: "f32Rows(a.M, a.Ldqkv, mul(a.NHead+2*a.NKV, a.HeadDim))"},
			{Name: "Freqs", Opt: true, Elem: F32, Span: "f32Vec(a.RopeDim / 2)"},
			{Name: "KCache", Role: Out, Elem: Typed, Span: "cacheWrite(&a, d.Type)"},
			{Name: "VCache", Role: Out, Elem: Typed, Span: "cacheWrite(&a, d.Type)"},
		},
		Params: []Param{{Name: "HeadDim"}, {Name: "NHead"}, {Name: "NKV"}, {Name: "M", Patch: true}, {Name: "Ldqkv"},
			{Name: "Pos0", Patch: true}, {Name: "Mode", Kind: Bits, Enum: "RopeMode"}, {Name: "RopeDim"}, {Name: "HeadStride"}, {Name: "PosStride"},
			{Name: "SeqStride"}, {Name: "Flags", Kind: Bits}, {Name: "MScale", Kind: F32v}},
		Grid: [3]string{"a.M", "1", "1"},
		Checks: append(ropeChecks(),
			Check{Fail: "a.M > 1 && a.Ldqkv < mul(a.NHead+2*a.NKV, a.HeadDim)",
				Msg: "row stride %d smaller than %d heads of %d", Args: "a.Ldqkv, a.NHead+2*a.NKV, a.HeadDim"}),
	},
	{Name: "Attention", Fn: "attention", Typed: true, Families: []string{"Attend"},
		Doc: "out[t, h] = softmax(scale·q[t,h]·K[kvh]ᵀ (+ causal mask))·V[kvh] with kvh = h / (nHead/nKV). Keys 0..kvLen-1 are visible; with FlagCausal query t at position pos0+t sees keys ≤ pos0+t, and with a window w > 0 a query at position p sees only keys j > p-w (sliding-window layers). With FlagPerSeqRows, query row t belongs to sequence t (beams) at position pos0. K/V layout as RopeKV's caches (f32 projections work too: headStride hd, posStride = row stride). If probs is bound, the softmax probabilities are written to probs[h, t, j] with row stride ldp (the cross-attention weights used for word timestamps); masked keys get probability 0, and a query that sees no key gets a zero output.",
		Binds: []Bind{
			{Name: "Q", Elem: F32, Span: "f32Rows(a.M, a.Ldq, mul(a.NHead, a.HeadDim))"},
			{Name: "K", Elem: Typed, Span: "cacheRead(&a, d.Type)"},
			{Name: "V", Elem: Typed, Span: "cacheRead(&a, d.Type)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, mul(a.NHead, a.HeadDim))"},
			{Name: "Probs", Role: Out, Opt: true, Elem: F32, Span: "f32Rows(mul(a.NHead, a.M), a.Ldp, a.KVLen)"},
		},
		Params: append(attendParams(),
			Param{Name: "Ldp", Doc: "row stride of probs"},
			Param{Name: "Window", Doc: "sliding window: a query at position p sees keys j > p-window only (0 = all keys)"}),
		Grid: [3]string{"a.NHead", "a.M", "1"},
		// An empty dispatch (no rows or no heads) is valid whatever its
		// other fields say: builders leave them zero.
		Checks: []Check{
			{Fail: "a.M > 0 && a.NHead > 0 && (a.HeadDim == 0 || a.NKV == 0 || a.NHead%a.NKV != 0)",
				Msg: "%d query heads cannot share %d KV heads (head size %d)", Args: "a.NHead, a.NKV, a.HeadDim"},
			{Fail: "a.M > 1 && (a.Ldq < mul(a.NHead, a.HeadDim) || a.Ldo < mul(a.NHead, a.HeadDim))",
				Msg: "row strides (%d, %d) smaller than %d heads of %d", Args: "a.Ldq, a.Ldo, a.NHead, a.HeadDim"},
			{Fail: "a.M > 0 && a.NHead > 0 && a.Probs.Buf != NoBuf && a.Ldp < a.KVLen",
				Msg: "probs row stride %d smaller than kvLen %d", Args: "a.Ldp, a.KVLen"},
		},
	},
	elementwise("Softmax", "softmax", "Softmax over m rows of n, with the input scaled first.", Param{Name: "Scale", Kind: F32v}),
	{Name: "Conv1D", Fn: "conv1d", Typed: true,
		Doc: "out[to, co] = bias[co] + Σ_ci Σ_j W[co, ci, j]·x[to*stride+j-pad, ci] (zero outside the input). W is ggml-ordered ne = (kw, cin, cout). x is time-major [T][cin] (row stride ldx), or channel-major [cin][T] with FlagChannelMaj (the mel spectrogram). out is time-major with row stride ldo. T is the input length; pad applies to both ends, so there are (T+2·pad−kw)/stride+1 output rows.",
		Binds: []Bind{
			{Name: "W", Elem: Typed, Span: "weightRows(d.Type, a.Cout, mul(a.Kw, a.Cin))"},
			{Name: "X", Elem: F32, Span: "convInput(&a)"},
			{Name: "Bias", Opt: true, Elem: F32, Span: "f32Vec(a.Cout)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.OutRows(), a.Ldo, a.Cout)"},
		},
		Params: []Param{{Name: "Cin"}, {Name: "Cout"}, {Name: "T"}, {Name: "Kw"}, {Name: "Stride"}, {Name: "Pad"},
			{Name: "Flags", Kind: Bits, Doc: "FlagChannelMaj"}, {Name: "Ldx"}, {Name: "Ldo"}},
		Grid: [3]string{"a.Cout", "a.OutRows()", "1"},
	},
	{Name: "Argmax", Fn: "argmax", Families: []string{"Rows"},
		Doc: "out[t] = index of the largest of x[t, 0..n-1] (lowest index on ties).",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "f32Rows(a.M, a.Ldx, a.N)"},
			{Name: "Out", Role: Out, Elem: I32, Span: "i32Vec(a.M)"},
		},
		Params: []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Ldx"}},
		Grid:   [3]string{"a.M", "1", "1"},
		Checks: []Check{
			{Fail: "a.M > 0 && a.N == 0", Msg: "empty rows (n 0)"},
			{Fail: "a.M > 1 && a.Ldx < a.N", Msg: "row stride %d smaller than n %d", Args: "a.Ldx, a.N"},
		},
	},
	{Name: "Sample", Fn: "sample",
		Doc: "Draws one token from logits x[0..n-1] with the sampler settings the host wrote for this generation (SampleSettings, encoded at settings): (1) logit_bias: l[id] += bias for each entry; (2) penalties from counts (the sequence's token counts, counts[0..n), then the number of distinct ids d at counts[n] and those ids at counts[n+1..n+1+d); ids outside [0, n) are ignored): each counted token gets repetition (l becomes l/r if l > 0 else l*r), then l -= presence + count*frequency; (3) temperature; temp <= 0 means argmax (ties to the lowest index); (4) top-k (0 = off), then softmax, top-p (1 = off) keeping the smallest prefix (by descending probability, ties by index) whose mass reaches p, then min-p (0 = off) relative to the top token; (5) u = Uniform(seed, step); the token is the first in that order whose cumulative renormalised mass exceeds u, except when nothing truncates (top-k off or >= n, top-p >= 1, min-p off): then the first in index order (the same distribution, with no sort). The drawn token's count is then incremented (and appended to the distinct ids when new). With logprobs requested and bound, logprobs[0] is the drawn token's log-softmax of the raw logits at temperature 1 (before bias and penalties) and logprobs[1+2i], logprobs[2+2i] the id (as i32) and logprob of the i-th most likely token, i < top (descending raw logit, ties to the lower id). NaN logits count as −Inf; \"descending probability\" is descending scaled logit with ties to the lower id. With draws bound, one dispatch makes m such draws, each its own: draw i (draws[SampleDrawWords·i..]: slot s, row r, step) reads logits row r (x + r·ldx, r < xRows) and slot s's settings, counts, out and logprobs (each buffer holding slots records back to back: SampleSettingsWords, 2n+1, 1 and SampleLogprobWords words a slot), with its own scratch (f32[2n] a draw). The draws' slots must be distinct; a draw whose slot or row is out of range is skipped (the CPU backend reports it, and a repeated slot, as an error).",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "sampleX(&a)", Doc: "logits, left unchanged"},
			{Name: "Out", Role: Out, Elem: I32, Span: "i32Vec(sampleSlots(&a))"},
			{Name: "Settings", Elem: I32, Span: "i32Vec(mul(sampleSlots(&a), SampleSettingsWords))", Doc: "the generation's SampleSettings"},
			{Name: "Counts", Opt: true, Role: InOut, Elem: I32, Span: "i32Vec(mul(sampleSlots(&a), mul(2, a.N)+1))", Doc: "i32[2n+1]: the sequence's token counts"},
			{Name: "Scratch", Role: InOut, Elem: F32, Span: "f32Vec(mul(sampleDraws(&a), mul(2, a.N)))", Doc: "f32[2n] a draw, the backend's working space"},
			{Name: "Logprobs", Opt: true, Role: Out, Elem: F32, Span: "f32Vec(mul(sampleSlots(&a), SampleLogprobWords))", Doc: "f32[SampleLogprobWords]"},
			{Name: "Draws", Opt: true, Elem: I32, Span: "i32Vec(mul(a.M, SampleDrawWords))", Doc: "i32[m][SampleDrawWords]: each draw's slot, logits row and step; NoBuf: one draw, step from params"},
		},
		Params: []Param{{Name: "N"}, {Name: "Step", Patch: true},
			{Name: "M", Patch: true, Doc: "draws (with draws bound)"}, {Name: "Ldx", Doc: "logits row stride (with draws bound)"},
			{Name: "Slots", Doc: "the slots the per-slot buffers hold (with draws bound)"},
			{Name: "XRows", Doc: "logits rows (with draws bound)"}},
		Grid: [3]string{"1", "sampleDraws(&a)", "1"},
		Checks: []Check{
			{Fail: "a.Draws.Buf != NoBuf && (a.Slots == 0 || a.XRows == 0)", Msg: "draws over %d slots and %d logits rows", Args: "a.Slots, a.XRows"},
			{Fail: "a.Draws.Buf != NoBuf && a.XRows > 1 && a.Ldx < a.N", Msg: "logits row stride %d smaller than n %d", Args: "a.Ldx, a.N"},
		},
	},
	{Name: "Copy", Fn: "copy", Typed: true, Families: []string{"Rows"},
		Doc: "Converts m rows of n f32 values into Type (f32, f16 or bf16).",
		Binds: []Bind{
			{Name: "Src", Elem: F32, Span: "f32Rows(a.M, a.Lds, a.N)"},
			{Name: "Dst", Role: Out, Elem: Typed, Span: "elemRows(d.Type, a.M, a.Ldd, a.N)"},
		},
		Params: []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Lds"}, {Name: "Ldd"}},
		Grid:   rowsNM,
	},
	gatedMul("GELUMul", "gelu_mul", "gelu_tanh"),
	gatedMulMatVec("GELUMulMatVec", "gelu_mul_mat_vec", "gelu_tanh"),
	{Name: "BeamCopy", Fn: "beam_copy", Typed: true,
		Doc: "Reorders the sequences of a cache in place (beam search's KV caches, without the host): for every d < seqs with src[d] in [0, seqs) and src[d] != d, positions [pos0, pos0+n) of sequence d become a copy of sequence src[d]'s; other sequences are left unchanged. Every read happens before any write, so src may be any map, a permutation included. Element (s, p, i) is at s*seqStride + p*posStride + i, i < width, of Type f32, f16 or bf16.",
		Binds: []Bind{
			{Name: "Cache", Role: InOut, Elem: Typed, Span: "beamCache(&a, d.Type)"},
			{Name: "Src", Elem: I32, Span: "i32Vec(a.Seqs)", Doc: "i32[seqs]: the source of each sequence"},
		},
		Params: []Param{{Name: "Width", Doc: "elements a position holds"}, {Name: "Seqs"}, {Name: "N", Patch: true, Doc: "positions"},
			{Name: "Pos0", Patch: true, Doc: "first position"}, {Name: "PosStride"}, {Name: "SeqStride"}},
		Grid: [3]string{"a.Width", "a.N", "1"},
		Checks: []Check{
			{Fail: "a.Seqs > BeamCopyMaxSeqs", Msg: "%d sequences, at most %d", Args: "a.Seqs, BeamCopyMaxSeqs"},
			{Fail: "a.N > 1 && a.PosStride < a.Width", Msg: "position stride %d smaller than width %d", Args: "a.PosStride, a.Width"},
			{Fail: "a.Seqs > 1 && a.N > 0 && a.SeqStride < mul(a.Pos0+a.N-1, a.PosStride)+a.Width",
				Msg:  "sequence stride %d overlaps the next sequence (%d positions from %d, stride %d, width %d)",
				Args: "a.SeqStride, a.N, a.Pos0, a.PosStride, a.Width"},
		},
	},
	{Name: "WhisperFilter", Fn: "whisper_filter",
		Doc: "Whisper's logit filters, in place on m rows of logits x (one per sequence, whose tokens sampled so far in the window are hist[t, 0..count-1]), as openai-whisper's decoder applies them before a token is chosen: (1) x[j] += table[j] (the logit bias; −Inf suppresses), then, when count == 0, x[j] += table[n+j] (suppress-blank); (2) with FlagTimestamps (tb = tsBegin): x[noTs] = −Inf; if the last token is a timestamp (≥ tb), then x[tb..n) = −Inf when the one before is a timestamp too or count < 2, else x[0..eot) = −Inf; if hist holds a timestamp, the last one l, x[tb..l) = −Inf, and x[l] = −Inf too unless the last token is a timestamp and the one before is not; when count == 0, x[0..tb) = −Inf and x[tb+maxInitial+1..n) = −Inf (a maxInitial of n or more bounds nothing); finally, with lse(s) = log Σ exp over s, if lse(x[tb..n)) − lse(x) > max(x[0..tb)) − lse(x), x[0..tb) = −Inf. The CPU sums the exponentials in float64 (as the host filter); GPUs in float32, so that last decision may differ only where its two sides are within rounding.",
		Binds: []Bind{
			{Name: "X", Role: InOut, Elem: F32, Span: "f32Rows(a.M, a.Ldx, a.N)", Doc: "logits, filtered in place"},
			{Name: "Table", Elem: F32, Span: "f32Vec(mul(2, a.N))", Doc: "f32[2n]: added to every row, then (count 0 only) the second half"},
			{Name: "Hist", Opt: true, Elem: I32, Span: "f32Rows(a.M, a.Ldh, a.Count)", Doc: "i32 rows: each sequence's tokens sampled so far"},
		},
		Params: []Param{{Name: "N", Doc: "vocabulary"}, {Name: "M", Doc: "rows (sequences)"}, {Name: "Ldx"}, {Name: "Ldh", Doc: "row stride of hist"},
			{Name: "Count", Patch: true, Doc: "tokens sampled so far in the window"},
			{Name: "TsBegin", Doc: "first timestamp token"}, {Name: "EOT"}, {Name: "NoTs", Doc: "<|notimestamps|>"},
			{Name: "MaxInitial", Patch: true, Doc: "the last timestamp index allowed first"},
			{Name: "Flags", Kind: Bits, Doc: "FlagTimestamps"}},
		Grid: [3]string{"a.M", "1", "1"},
		Checks: []Check{
			{Fail: "a.M > 1 && a.Ldx < a.N", Msg: "row stride %d smaller than n %d", Args: "a.Ldx, a.N"},
			{Fail: "a.Flags&FlagTimestamps != 0 && (a.TsBegin > a.N || a.EOT > a.TsBegin || a.NoTs >= a.N)",
				Msg: "special tokens (timestamps from %d, EOT %d, no-timestamps %d) outside a vocabulary of %d", Args: "a.TsBegin, a.EOT, a.NoTs, a.N"},
			{Fail: "a.Flags&FlagTimestamps != 0 && a.M > 0 && a.Count > 0 && a.Hist.Buf == NoBuf", Msg: "timestamp rules need the sampled tokens (hist)"},
			{Fail: "a.M > 1 && a.Count > 0 && a.Ldh < a.Count", Msg: "hist row stride %d smaller than count %d", Args: "a.Ldh, a.Count"},
		},
	},
	{Name: "RopeKVPaged", Fn: "rope_kv_paged", Typed: true,
		Doc: "RopeKV for m rows that are m different sequences, each at its own position: row t is at position pos[t] and its K and V go to the block table row table[t*tableStride..]: position p lives in block table[t*tableStride + p/blockSize], slot p%blockSize. Cache element (block b, kv head h, slot o, dim i) is at b*blockStride + h*headStride + o*posStride + i (Type f16 or f32); the pool holds nBlocks blocks. A row whose position is past its table (p/blockSize >= tableStride) or whose block is outside the pool is an error on the CPU and is skipped on GPUs.",
		Binds: []Bind{
			{Name: "QKV", Role: InOut, Elem: F32, Span: "f32Rows(a.M, a.Ldqkv, mul(a.NHead+2*a.NKV, a.HeadDim))"},
			{Name: "Freqs", Opt: true, Elem: F32, Span: "f32Vec(a.RopeDim / 2)"},
			{Name: "KCache", Role: Out, Elem: Typed, Span: "blockPool(a.NBlocks, a.BlockStride, d.Type)"},
			{Name: "VCache", Role: Out, Elem: Typed, Span: "blockPool(a.NBlocks, a.BlockStride, d.Type)"},
			{Name: "Pos", Elem: I32, Span: "i32Vec(a.M)", Doc: "i32[m]: each row's position"},
			{Name: "Table", Elem: I32, Span: "i32Vec(mul(a.M, a.TableStride))", Doc: "i32 rows of tableStride: each row's block table"},
		},
		Params: []Param{{Name: "HeadDim"}, {Name: "NHead"}, {Name: "NKV"}, {Name: "M", Patch: true}, {Name: "Ldqkv"},
			{Name: "Mode", Kind: Bits, Enum: "RopeMode"}, {Name: "RopeDim"}, {Name: "HeadStride"}, {Name: "PosStride"},
			{Name: "BlockSize", Doc: "positions per block"}, {Name: "BlockStride", Doc: "elements per block"}, {Name: "NBlocks", Doc: "blocks in the pool"},
			{Name: "TableStride", Doc: "entries per block-table row"}, {Name: "MScale", Kind: F32v}},
		Grid:   [3]string{"a.M", "1", "1"},
		Checks: append(ropeChecks(), pagedChecks()...),
	},
	{Name: "AttentionPaged", Fn: "attention_paged", Typed: true,
		Doc: "Decode attention for m rows that are m different sequences: row t (at position pos[t]) attends to keys 0..pos[t] of its own blocks (RopeKVPaged's layout and table), with a window w > 0 keeping only keys j > pos[t]-w. out[t, h] = softmax(scale·q[t,h]·K[kvh]ᵀ)·V[kvh] with kvh = h / (nHead/nKV). A row whose position is past its table or whose block is outside the pool is an error on the CPU and gets a zero output on GPUs.",
		Binds: []Bind{
			{Name: "Q", Elem: F32, Span: "f32Rows(a.M, a.Ldq, mul(a.NHead, a.HeadDim))"},
			{Name: "K", Elem: Typed, Span: "blockPool(a.NBlocks, a.BlockStride, d.Type)"},
			{Name: "V", Elem: Typed, Span: "blockPool(a.NBlocks, a.BlockStride, d.Type)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, mul(a.NHead, a.HeadDim))"},
			{Name: "Pos", Elem: I32, Span: "i32Vec(a.M)", Doc: "i32[m]: each row's position"},
			{Name: "Table", Elem: I32, Span: "i32Vec(mul(a.M, a.TableStride))", Doc: "i32 rows of tableStride: each row's block table"},
		},
		Params: []Param{{Name: "HeadDim"}, {Name: "NHead"}, {Name: "NKV"}, {Name: "M", Patch: true}, {Name: "Ldq"}, {Name: "Ldo"},
			{Name: "Scale", Kind: F32v}, {Name: "HeadStride"}, {Name: "PosStride"},
			{Name: "BlockSize"}, {Name: "BlockStride"}, {Name: "NBlocks"}, {Name: "TableStride"},
			{Name: "Window", Doc: "sliding window (0 = all keys)"}},
		Grid: [3]string{"a.NHead", "a.M", "1"},
		Checks: append([]Check{
			{Fail: "a.M > 0 && a.NHead > 0 && (a.HeadDim == 0 || a.NKV == 0 || a.NHead%a.NKV != 0)",
				Msg: "%d query heads cannot share %d KV heads (head size %d)", Args: "a.NHead, a.NKV, a.HeadDim"},
			{Fail: "a.M > 1 && (a.Ldq < mul(a.NHead, a.HeadDim) || a.Ldo < mul(a.NHead, a.HeadDim))",
				Msg: "row strides (%d, %d) smaller than %d heads of %d", Args: "a.Ldq, a.Ldo, a.NHead, a.HeadDim"},
		}, pagedChecks()...),
	},
	{Name: "RopeAttention", Fn: "rope_attention", Typed: true, Families: []string{"Attend"},
		Doc: "RopeKV then Attention in one kernel (decode: one launch where there were two). q is the Q part of m rows of a fused QKV buffer (Q: nHead heads at column 0, K: nKV heads after Q, V: nKV heads after K; row stride ldq). Q and K are rotated as RopeKV rotates them (freqs NoBuf = no rotation), K and V of row t are stored into the caches at position pos0+t (with FlagPerSeqRows: sequence t at position pos0), and out = Attention's output over keys 0..kvLen-1 with the rotated q and the caches so written (FlagCausal, window). Unlike RopeKV the qkv rows are only read. Rows of one sequence must be one row (a second would see the first's key, written in the same launch); probs are not produced.",
		Binds: []Bind{
			{Name: "Q", Elem: F32, Span: "f32Rows(a.M, a.Ldq, mul(a.NHead+2*a.NKV, a.HeadDim))", Doc: "the fused QKV rows"},
			{Name: "K", Role: InOut, Elem: Typed, Span: "ropeAttentionCache(&a, d.Type)"},
			{Name: "V", Role: InOut, Elem: Typed, Span: "ropeAttentionCache(&a, d.Type)"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Rows(a.M, a.Ldo, mul(a.NHead, a.HeadDim))"},
			{Name: "Freqs", Opt: true, Elem: F32, Span: "f32Vec(a.RopeDim / 2)", Doc: "f32[ropeDim/2], inverse frequencies after any context scaling"},
		},
		Params: ropeAttentionParams(),
		Grid:   [3]string{"a.NHead", "a.M", "1"},
		Checks: append(ropeChecks(), headsCheck,
			Check{Fail: "a.M > 1 && a.Flags&FlagPerSeqRows == 0",
				Msg: "%d rows of one sequence: rows after the first would read keys written in the same launch", Args: "a.M"},
			Check{Fail: "a.M > 1 && (a.Ldq < mul(a.NHead+2*a.NKV, a.HeadDim) || a.Ldo < mul(a.NHead, a.HeadDim))",
				Msg: "row strides (%d, %d) smaller than the qkv row or %d heads of %d", Args: "a.Ldq, a.Ldo, a.NHead, a.HeadDim"}),
	},
	{Name: "WhisperTrack", Fn: "whisper_track",
		Doc: "One step of a Whisper window decoded on the backend, after WhisperFilter and Argmax (greedy), so the chosen token feeds the next step with no host in between. track holds the window's state: words 0..TrackHeader-1 (status: 0 running, 1 end of text, 2 the token limit, 3 the end timestamp, 4 a repetition loop; kept tokens k; selections s; the no-speech log-probability (f32 bits); limit; end timestamp), the kept tokens at TrackHeader..TrackHeader+cap, each selection's log-probability (f32 bits) at TrackHeader+cap+i. With FlagTrackStart (x: the logits after <|startoftranscript|>): the state is reset, status, k and s 0, the no-speech log-probability x[token] − lse(x) and limit and endTs stored. Otherwise, while status is 0 (else nothing changes): tok = choice[0]; logprob count is x[tok] − lse(x) (x: the filtered logits); s = count+1; tok == eot sets status 1; else tokens[count] = tok, k = count+1, next[0] = tok, then, in this order: a loop (a unit of u ≤ repUnit tokens, the smallest such u, repeated r ≥ repMin times with r·u ≥ repSpan at the end of the kept tokens, timestamps (≥ tsBegin) equal to each other) sets status 4 and k = count+1 − (r−1)·u; endTs > 0 and tok ≥ endTs sets status 3; k ≥ limit sets status 2. lse(s) = log Σ exp over s; the CPU sums the exponentials in float64 (plan.LogSumExp, as the host decoder), GPUs in float32.",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "f32Vec(a.N)", Doc: "the step's (filtered) logits"},
			{Name: "Choice", Opt: true, Elem: I32, Span: "i32Vec(1)", Doc: "the chosen token (Argmax's out)"},
			{Name: "Track", Role: InOut, Elem: I32, Span: "i32Vec(TrackHeader+mul(2, a.Cap))", Doc: "the window's state, kept tokens and log-probabilities"},
			{Name: "Next", Opt: true, Role: Out, Elem: I32, Span: "i32Vec(1)", Doc: "the next step's input token"},
		},
		Params: []Param{{Name: "N", Doc: "vocabulary"}, {Name: "Count", Patch: true, Doc: "selections so far in the window"},
			{Name: "Cap", Doc: "room for tokens in track"}, {Name: "EOT"}, {Name: "TsBegin", Doc: "first timestamp token"},
			{Name: "Token", Doc: "FlagTrackStart: <|nospeech|>"},
			{Name: "Limit", Patch: true, Doc: "FlagTrackStart: the most tokens kept"},
			{Name: "EndTs", Patch: true, Doc: "FlagTrackStart: the end timestamp (0: none)"},
			{Name: "RepUnit", Doc: "the repetition guard's longest unit (0: off)"}, {Name: "RepMin", Doc: "its fewest repeats"},
			{Name: "RepSpan", Doc: "its fewest tokens in all"},
			{Name: "Flags", Kind: Bits, Doc: "FlagTrackStart"}},
		Grid: [3]string{"1", "1", "1"},
		Checks: []Check{
			{Fail: "a.N == 0 || a.EOT >= a.N || a.TsBegin > a.N || a.Token >= a.N", Msg: "special tokens (EOT %d, timestamps from %d, token %d) outside a vocabulary of %d", Args: "a.EOT, a.TsBegin, a.Token, a.N"},
			{Fail: "a.RepUnit > TrackRepeatMaxUnit", Msg: "repetition unit %d, at most %d", Args: "a.RepUnit, TrackRepeatMaxUnit"},
			{Fail: "a.Flags&FlagTrackStart == 0 && a.Choice.Buf == NoBuf", Msg: "a step needs the chosen token (choice)"},
		},
	},
	{Name: "RopeAttentionMatVec", Fn: "rope_attention_mat_vec", Typed: true, Families: []string{"Attend"},
		Doc: "RopeAttention then out = att·Wᵀ + bias + out, for decode's one row (issue #34: the attention output product folded into the attention launch). The params and the first five bindings are RopeAttention's (att is its Out; the caches are f16); Type is W's. W is square: n = k = nHead·headDim, the output row's width (models whose embedding width is the attention's, as the Llama family's).",
		Binds: []Bind{
			{Name: "Q", Elem: F32, Span: "f32Rows(a.M, a.Ldq, mul(a.NHead+2*a.NKV, a.HeadDim))", Doc: "the fused QKV rows"},
			{Name: "K", Role: InOut, Elem: F16, Span: "ropeAttentionMatVecCache(&a)"},
			{Name: "V", Role: InOut, Elem: F16, Span: "ropeAttentionMatVecCache(&a)"},
			{Name: "Att", Role: Out, Elem: F32, Span: "f32Vec(mul(a.NHead, a.HeadDim))", Doc: "the attention's output row"},
			{Name: "Freqs", Opt: true, Elem: F32, Span: "f32Vec(a.RopeDim / 2)", Doc: "f32[ropeDim/2], inverse frequencies after any context scaling"},
			{Name: "W", Elem: Typed, Span: "weightRows(d.Type, mul(a.NHead, a.HeadDim), mul(a.NHead, a.HeadDim))", Doc: "the output weights, n rows of n"},
			{Name: "Out", Role: InOut, Elem: F32, Span: "f32Vec(mul(a.NHead, a.HeadDim))", Doc: "the residual row, added to"},
			{Name: "Bias", Opt: true, Elem: F32, Span: "f32Vec(mul(a.NHead, a.HeadDim))", Doc: "f32[n]"},
		},
		Params: ropeAttentionParams(),
		Grid:   [3]string{"a.NHead", "a.M", "1"},
		Checks: append(ropeChecks(), headsCheck,
			Check{Fail: "a.M > 1", Msg: "%d rows: the fused output product is decode's one row", Args: "a.M"}),
	},
	{Name: "WhisperBeams", Fn: "whisper_beams",
		Doc: "One step of a Whisper beam search ranked on the backend (the reference's BeamSearchDecoder), after each beam's candidates (Sample's logprobs records at top, row stride ldt; ldt 0: every beam's are row 0, a window's prompt). state holds the search: words 0..BeamsHeader-1 (status: 0 running, 1 enough finished, 2 every candidate ended, 3 the token limit; count c, the tokens each beam holds; finished f; beams nb; limit; maxCand; endTs; 0), the beams' sums of log-probabilities (f32 bits) at BeamsHeader+b, then fin finished entries of cap+2 words (length, sum as f32 bits, tokens). The host writes the header and the sums at a window's start. While status is 0 (else nothing changes): candidate (b, j) (j < nb+1) is beam b's tokens (row b of hist, c of them) then token id top[b·ldt+1+2j] with score sums[b] + top[b·ldt+2+2j] (float32); a candidate whose sequence an earlier one has keeps the earlier's place and gives it its score and beam; the rest are ordered by score, descending (NaN last), ties by place. In that order, those ending in eot or a token ≥ endTs > 0 finish (the sequence, without eot; up to maxCand finished in all) and the others become the next beams until nb; none: status 2. Otherwise the live ones repeat in order to fill nb, beam d takes its sequence (hist row d, c+1 tokens), sum, src[d] (its candidate's beam) and next[d] (its new token), src[d] = d and next[d] = eot for nb ≤ d < beams; c+1 ≥ limit sets status 3 and f ≥ maxCand status 1 (first); a stop with fewer than nb finished adds the beams by sum, descending (ties by index), a sequence once, until nb.",
		Binds: []Bind{
			{Name: "Top", Elem: F32, Span: "f32Rows(a.Beams, a.Ldt, SampleLogprobWords)", Doc: "each beam's candidates, Sample's logprobs records"},
			{Name: "Hist", Role: InOut, Elem: I32, Span: "i32Vec(mul(a.Beams, a.Cap))", Doc: "each beam's tokens, rows of cap"},
			{Name: "State", Role: InOut, Elem: I32, Span: "i32Vec(BeamsHeader+a.Beams+mul(a.Fin, a.Cap+2))", Doc: "the search's state, sums and finished sequences"},
			{Name: "Src", Role: Out, Elem: I32, Span: "i32Vec(a.Beams)", Doc: "each beam's source (BeamCopy's src)"},
			{Name: "Next", Role: Out, Elem: I32, Span: "i32Vec(a.Beams)", Doc: "each beam's next input token"},
		},
		Params: []Param{{Name: "Beams", Doc: "rows of hist, src and next (the plan's beams)"}, {Name: "Cap", Doc: "tokens a sequence may hold"},
			{Name: "Fin", Doc: "finished entries state holds"}, {Name: "Ldt", Doc: "row stride of top (0: one row for every beam)"}, {Name: "EOT"}},
		Grid: [3]string{"1", "1", "1"},
		Checks: []Check{
			{Fail: "a.Beams == 0 || a.Beams > BeamsMax", Msg: "%d beams, 1 to %d", Args: "a.Beams, BeamsMax"},
			{Fail: "a.Cap == 0 || a.Fin == 0", Msg: "no room for tokens (%d) or finished sequences (%d)", Args: "a.Cap, a.Fin"},
			{Fail: "a.Ldt != 0 && a.Ldt < SampleLogprobWords", Msg: "candidate row stride %d shorter than a record (%d)", Args: "a.Ldt, SampleLogprobWords"},
		},
	},
	{Name: "WhisperAlign", Fn: "whisper_align",
		Doc: "Word timing's alignment (openai-whisper's find_alignment): the cross-attention weights of heads alignment heads over rows tokens (head h, row t, frame j at w[(h/group)*groupStride + (h%group)*headStride + t*ldw + j]: groups of heads, a decoder layer's) become one path from the text rows to the audio frames. Per head: each row is renormalised over the first cols frames (w/Σw), each frame standardised over the rows ((v − mean)/std, population std), each row median filtered over width frames (reflect padding: frame −k is frame k, frame cols−1+k is frame cols−1−k; rows of cols ≤ width/2 frames are left unfiltered); the matrix is the mean over heads. Rows first..rows−2 (the last row, the final token's, takes part in the standardisation only), negated, are the cost of a dynamic time warping from (0, 0) to (rows−2−first, cols−1): cost(i, j) = x(i, j) + the least of the diagonal, upper and left neighbours, chosen as the reference does (the diagonal when strictly least, else the upper when strictly least, else the left), with cost 0 before (0, 0) and +Inf on the other borders. out[r] is the frame at which the path, traced back from the end, first enters row r (−1 when it enters on the border). The CPU computes in float64 (as the reference's time warping); GPUs the matrix in float32 (as the reference) and the warping's running costs as float-float pairs (about 48 bits), so a path may differ only where two of its costs are within the float32 matrix's rounding.",
		Binds: []Bind{
			{Name: "W", Elem: F32, Span: "alignWeights(&a)", Doc: "the alignment heads' cross-attention weights"},
			{Name: "Out", Role: Out, Elem: I32, Span: "i32Vec(alignPath(&a))", Doc: "i32[rows−1−first]: each row's first frame on the path"},
		},
		Params: []Param{{Name: "Heads"}, {Name: "Group", Doc: "heads a group"}, {Name: "GroupStride"},
			{Name: "HeadStride", Patch: true}, {Name: "Ldw", Doc: "row stride of w"},
			{Name: "Rows", Patch: true, Doc: "tokens (0: nothing to do)"}, {Name: "Cols", Patch: true, Doc: "audio frames"},
			{Name: "First", Patch: true, Doc: "the first row of the path"}, {Name: "Width", Doc: "the median filter's width (odd)"}},
		Grid: [3]string{"1", "1", "1"},
		Checks: []Check{
			{Fail: "a.Rows > 0 && (a.Heads == 0 || a.Group == 0 || a.Cols == 0 || a.First+1 >= a.Rows)", Msg: "%d heads (groups of %d), %d frames and first row %d of %d rows leave no path", Args: "a.Heads, a.Group, a.Cols, a.First, a.Rows"},
			{Fail: "a.Rows > 0 && (a.Cols > a.Ldw || (a.Group > 1 && a.HeadStride < mul(a.Rows, a.Ldw)) || (a.Heads > a.Group && a.GroupStride < mul(a.Group, a.HeadStride)))",
				Msg: "%d frames of %d rows overlap (row stride %d, head stride %d, group stride %d)", Args: "a.Cols, a.Rows, a.Ldw, a.HeadStride, a.GroupStride"},
			{Fail: "alignPath(a) > AlignMaxPath", Msg: "a path of %d rows, at most %d", Args: "alignPath(a), AlignMaxPath"},
			{Fail: "a.Width%2 == 0 || a.Width > AlignMaxWidth", Msg: "median filter width %d, odd and at most %d", Args: "a.Width, AlignMaxWidth"},
		},
	},
	{Name: "TokenLogprob", Fn: "token_logprob",
		Doc: "out[t] = x[t, ids[t]] − lse(x[t, 0..n)) for each of m rows, with lse(s) = log Σ exp over s: the log-probability of a given token among the row's first n logits (−Inf for an id outside [0, n)). The CPU sums the exponentials in float64 (plan.LogSumExp, as the host decoder), GPUs in float32.",
		Binds: []Bind{
			{Name: "X", Elem: F32, Span: "f32Rows(a.M, a.Ldx, a.N)", Doc: "logits"},
			{Name: "Ids", Elem: I32, Span: "i32Vec(a.M)", Doc: "each row's token"},
			{Name: "Out", Role: Out, Elem: F32, Span: "f32Vec(a.M)"},
		},
		Params: []Param{{Name: "N"}, {Name: "M", Patch: true}, {Name: "Ldx"}},
		Grid:   [3]string{"a.M", "1", "1"},
		Checks: []Check{
			{Fail: "a.M > 0 && a.N == 0", Msg: "empty rows (n 0)"},
			{Fail: "a.M > 1 && a.Ldx < a.N", Msg: "row stride %d smaller than n %d", Args: "a.Ldx, a.N"},
		},
	},
	{Name: "LayerNormMatVec", Fn: "layer_norm_mat_vec", Typed: true, Families: []string{"Product"},
		Doc: "out = (layernorm(x) ⊙ g + b)·Wᵀ + bias + res, one pass: LayerNorm's arithmetic (biased variance around the mean) on each x row, then MatVec's product, FlagGELUOut included. Weights f32, f16 or q8_0 (LayerNormMatVecType: the types GPU backends carry an instance for; model code keeps LayerNorm and MatVec for the others).",
		Binds: func() []Bind {
			return productBinds(Bind{Name: "G", Elem: F32, Span: "f32Vec(a.K)", Doc: "norm weight f32[k]"},
				Bind{Name: "B", Elem: F32, Span: "f32Vec(a.K)", Doc: "norm bias f32[k]"})
		}(),
		Params: productParams(productFlags, Param{Name: "Eps", Kind: F32v}), Grid: rowsNM,
		Checks: []Check{{Fail: "!LayerNormMatVecType(a.Type)", Msg: "weight type %s (f32, f16 or q8_0)", Args: "a.Type"},
			{Fail: "a.M > 1 && a.Ldx < a.K", Msg: "row stride %d smaller than k %d", Args: "a.Ldx, a.K"},
			{Fail: "a.Flags&^FlagGELUOut != 0", Msg: "unknown flags %#x", Args: "a.Flags"},
			{Fail: "a.Flags&FlagGELUOut != 0 && a.Res.Buf != NoBuf", Msg: "FlagGELUOut with a residual (flags %#x)", Args: "a.Flags"}}},
}
