package metal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/llm"
	"github.com/harkapp/hark/engine/llm/bench"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/engine/whisper"
	testdata "github.com/harkapp/hark/internal/shared"
	"github.com/harkapp/hark/shaders"
)

// capture is a plan.Backend that loads on a fake-device metal backend and
// keeps the plan and executable the model code built, so the tests drive
// the real plans of the shared models.
type capture struct {
	b   *Backend
	dev *fakeDevice
	p   *plan.Plan
	x   *Exec
}

func (c *capture) Name() string { return "metal" }

func (c *capture) Load(p *plan.Plan) (plan.Executable, error) {
	x, err := c.b.Load(p)
	if err != nil {
		return nil, err
	}
	c.p, c.x = p, x.(*Exec)
	return x, nil
}

func newCapture() *capture {
	b, dev := newTestBackend()
	return &capture{b: b, dev: dev}
}

func loadStories(t testing.TB) (*capture, *llm.Model) {
	t.Helper()
	f, err := gguf.Open(testdata.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	c := newCapture()
	m, err := llm.Load(c, f, llm.Options{Context: 256})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return c, m
}

// smolShape is SmolLM2-135M's shape with 2 of its 30 layers.
var smolShape = bench.Shape{Layers: 2, Embd: 576, FF: 1536, Heads: 9, KVHeads: 3, Vocab: 49152}

// loadSmol writes (once per test binary) and loads a SmolLM2-shaped Q4_0
// model with random weights and the real tokenizer.
func loadSmol(t testing.TB) (*capture, *llm.Model) {
	t.Helper()
	smolOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hark-metal-test")
		if err != nil {
			smolErr = err
			return
		}
		smolPath = filepath.Join(dir, "smol-2l-q4_0.gguf")
		smolErr = bench.WriteFile(smolPath, smolShape, ggml.Q4_0, testdata.Path(t, "llm-kit", "tokenizers", "smollm2"), 1)
	})
	require.NoError(t, smolErr)
	f, err := gguf.Open(smolPath)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	c := newCapture()
	m, err := llm.Load(c, f, llm.Options{Context: 512, Batch: 64})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return c, m
}

var (
	smolOnce sync.Once
	smolPath string
	smolErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if smolPath != "" {
		os.RemoveAll(filepath.Dir(smolPath))
	}
	os.Exit(code)
}

func loadWhisper(t testing.TB, name string, beams int) (*capture, *whisper.Model) {
	t.Helper()
	f, err := whisper.OpenFile(testdata.Path(t, "whisper-kit", "models", name))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	c := newCapture()
	m, err := f.Load(c, whisper.Options{Beams: beams})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return c, m
}

// decodeChain is the step list of a chained LLM decode of n tokens from
// pos: decode then argmax for each token.
func decodeChain(pos, n int) []Step {
	var st []Step
	for i := range n {
		p := int64(pos + i)
		st = append(st,
			Step{Pass: llm.PassDecode, Vars: plan.Vars{plan.VarPos: p, plan.VarNTok: 1, plan.VarKVLen: p + 1}},
			Step{Pass: llm.PassArgmax, Vars: plan.Vars{plan.VarPos: p + 1, plan.VarKVLen: p + 1}})
	}
	return st
}

// Every pass of the shared models encodes with realistic variables: the
// bounds check derived from the kernel contract accepts the real plans,
// weights are wrapped from the memory map, and a 64-token chained decode
// is one command buffer.
func TestRealPlansEncode(t *testing.T) {
	c, m := loadStories(t)
	_, err := m.Prefill([]int32{1, 400, 300, 200, 100})
	require.NoError(t, err)
	_, err = m.Decode(7)
	require.NoError(t, err)
	x := c.x
	before := x.Stats()
	n, err := x.RunSteps(decodeChain(6, 64), 128, nil)
	require.NoError(t, err)
	require.Equal(t, 128, n)
	st := x.Stats()
	require.Equal(t, 1, st.CommandBuffers-before.CommandBuffers)
	perToken := len(c.p.Passes[llm.PassDecode].Ops) + len(c.p.Passes[llm.PassArgmax].Ops)
	require.Equal(t, 64*perToken, st.Dispatches-before.Dispatches)
	// The last position of the context still fits; one more overruns.
	_, err = x.RunSteps(decodeChain(254, 1), 0, nil)
	require.NoError(t, err)
	_, err = x.RunSteps(decodeChain(256, 1), 0, nil)
	require.ErrorContains(t, err, "overrun")
	require.NoError(t, x.Run(llm.PassSample, &plan.Vars{plan.VarKVLen: 7, plan.VarStep: 3}))
	// stories260K holds gate and up apart (ffn_down between them), so each
	// layer's gate|up is stacked (plan.Buffer.Parts) and copied; that
	// leaves the mapped tensors in runs too short to wrap (the model is
	// 1 MiB), copied as well. The SmolLM2 shape below keeps one region.
	stackedCopied(t, c)

	// The same for a SmolLM2-shaped Q4_0 GGUF (2 layers), where a chained
	// decode encodes too.
	c, m = loadSmol(t)
	oneRegion(t, c)
	_, err = m.Prefill([]int32{1, 2, 3})
	require.NoError(t, err)
	_, err = c.x.RunSteps(decodeChain(3, 64), 0, nil)
	require.NoError(t, err)
	require.Zero(t, c.dev.misaligned, "buffer offsets are 4-byte aligned")

	for _, name := range kitModels {
		c, m := loadWhisper(t, name, 5)
		// whisper.cpp's format packs tensors at any byte: they are copied
		// to aligned memory.
		require.Equal(t, 0, wrappedBuffers(c.dev), name)
		mel := make([]float32, m.H.NMels*3000)
		require.NoError(t, m.Encode(mel))
		_, err := m.Prompt([]int32{50257, 50362, 50363}, 0)
		require.NoError(t, err)
		_, err = m.Prompt([]int32{400}, 3)
		require.NoError(t, err)
		_, err = m.StepBeams([]int32{1, 2, 3, 4, 5}, 4)
		require.NoError(t, err)
		_, _, err = m.Align([]int32{50257, 50362, 50363, 1, 2, 3, 50256})
		require.NoError(t, err)
		_, err = m.Prompt([]int32{400}, m.H.NTextCtx-1)
		require.NoError(t, err)
		require.Zero(t, c.dev.misaligned, "%s: buffer offsets are 4-byte aligned", name)
	}
}

func oneRegion(t *testing.T, c *capture) {
	t.Helper()
	require.Equal(t, 1, wrappedBuffers(c.dev))
	region := handle(0)
	for h, b := range c.dev.bufs {
		if b.wrapped {
			region = h
		}
	}
	for i, bd := range c.p.Buffers {
		if bd.Kind == plan.BufWeights && bd.Name != "rope.freqs" {
			require.Equal(t, region, c.x.binds[i].h, bd.Name)
		}
	}
}

// stackedCopied checks that the plan has stacked weights and that each is
// copied whole, its parts end to end.
func stackedCopied(t *testing.T, c *capture) {
	t.Helper()
	n := 0
	for i, bd := range c.p.Buffers {
		if bd.Parts == nil {
			continue
		}
		n++
		b := c.x.binds[i]
		fb := c.dev.bufs[b.h]
		require.False(t, fb.wrapped, bd.Name)
		require.Equal(t, bd.WeightBytes(), fb.mem[b.base:b.base+uint64(bd.Size)], bd.Name)
	}
	require.Positive(t, n, "stacked weights")
}

func wrappedBuffers(dev *fakeDevice) int {
	n := 0
	for _, b := range dev.bufs {
		if b.wrapped {
			n++
		}
	}
	return n
}

var kitModels = []string{"ggml-kit-tiny.en-f16.bin", "ggml-kit-tiny.en-q8_0.bin"}

// cost is what one replay of some passes reads and writes, from the
// kernel contract's extents (plan.Dispatch.Spans).
// groups: the threadgroups of the launches, under the Apple families'
// tunings (groupFamilies).
type cost struct {
	dispatches, barriers       int
	weights, kv, other, writes uint64
	groups                     [len(groupFamilies)]uint64
}

// groupFamilies are the tunings whose threadgroups per token the table
// counts: apple7 and apple8 share Default's geometry, apple9 has its own
// (shaders.Families), as newBackend takes them on a GPU with the device
// fence (without it the Whisper selection's segments are one a row; the
// table's passes have no selection).
var groupFamilies = [...]string{"apple8", "apple9"}

func passCost(t testing.TB, x *Exec, steps []Step) cost {
	var c cost
	var hz plan.Hazards
	var acc []plan.Span
	var ls []shaders.Launch
	for _, s := range steps {
		for i := range x.passes[s.Pass].Ops {
			d := x.passes[s.Pass].Ops[i].Resolved(&s.Vars)
			for f, fam := range groupFamilies {
				tu := shaders.TuningFor(fam)
				var err error
				ls, err = shaders.LaunchFor(&d, &tu, ls[:0])
				require.NoError(t, err)
				for _, l := range ls {
					c.groups[f] += uint64(l.Groups[0]) * uint64(l.Groups[1]) * uint64(l.Groups[2])
				}
			}
			acc = d.Spans(x.sizes, acc[:0])
			if hz.Add(acc) {
				c.barriers++
			}
			c.dispatches++
			for _, a := range acc {
				if a.Write {
					c.writes += a.Touched
				}
				if !a.Read {
					continue
				}
				switch x.kinds[a.Buf] {
				case plan.BufWeights:
					c.weights += a.Touched
				case plan.State:
					c.kv += a.Touched
				default:
					c.other += a.Touched
				}
			}
		}
	}
	return c
}

func mib(b uint64) string { return fmt.Sprintf("%.2f", float64(b)/(1<<20)) }

// bandwidths of the slowest and fastest M-series chips (GB/s).
const lowBW, highBW = 68, 546

func (c cost) row(model, what string, div int) string {
	d := uint64(div)
	total := (c.weights + c.kv + c.other + c.writes) / d
	ms := func(gbs float64) string { return fmt.Sprintf("%.3f", float64(total)/(gbs*1e9)*1e3) }
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |",
		model, what, c.dispatches/div, c.barriers/div, c.groups[0]/d, c.groups[1]/d,
		mib(c.weights/d), mib(c.kv/d), mib(c.other/d), mib(c.writes/d), ms(lowBW), ms(highBW))
}

// perTokenTable computes the README's table from the real plans.
func perTokenTable(t *testing.T) string {
	var rows []string
	rows = append(rows,
		"| model | unit | dispatches | barriers | threadgroups apple7/8 | threadgroups apple9 | weights read MiB | KV/state read MiB | other read MiB | written MiB | ms @68 GB/s | ms @546 GB/s |",
		"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	c, _ := loadStories(t)
	for _, kv := range []int{64, 256} {
		rows = append(rows, passCost(t, c.x, decodeChain(kv-1, 1)).row("stories260K (f32)", fmt.Sprintf("decode token + argmax, KV %d", kv), 1))
	}
	c, _ = loadSmol(t)
	for _, kv := range []int{64, 512} {
		rows = append(rows, passCost(t, c.x, decodeChain(kv-1, 1)).row("SmolLM2-135M shape, 2 layers, Q4_0", fmt.Sprintf("decode token + argmax, KV %d", kv), 1))
	}
	for _, name := range kitModels {
		label := strings.TrimSuffix(strings.TrimPrefix(name, "ggml-kit-"), ".bin")
		c, m := loadWhisper(t, name, 5)
		step := []Step{{Pass: whisper.PassStep, Vars: plan.Vars{plan.VarPos: 64, plan.VarNTok: 1, plan.VarKVLen: 65}}}
		rows = append(rows, passCost(t, c.x, step).row(label, "decoder token, KV 65", 1))
		beams := []Step{{Pass: whisper.PassBeams, Vars: plan.Vars{plan.VarPos: 64, plan.VarNTok: 1, plan.VarKVLen: 65}}}
		rows = append(rows, passCost(t, c.x, beams).row(label, "5-beam step (all beams), KV 65", 1))
		enc := []Step{{Pass: whisper.PassEncode}}
		rows = append(rows, passCost(t, c.x, enc).row(label, fmt.Sprintf("encoder window (%d frames)", 2*m.H.NAudioCtx), 1))
	}
	return strings.Join(rows, "\n") + "\n"
}

const (
	tableStart = "<!-- per-token table: generated by TestPerTokenTable (HARK_UPDATE_README=1 rewrites it) -->\n"
	tableEnd   = "<!-- end of per-token table -->"
)

// The table in README.md is the one computed from the real plans.
func TestPerTokenTable(t *testing.T) {
	table := perTokenTable(t)
	path := filepath.Join(".", "README.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	i := strings.Index(doc, tableStart)
	j := strings.Index(doc, tableEnd)
	require.True(t, i >= 0 && j > i, "README.md has no per-token table markers")
	if got := doc[i+len(tableStart) : j]; got != table {
		if os.Getenv("HARK_UPDATE_README") == "1" {
			require.NoError(t, os.WriteFile(path, []byte(doc[:i+len(tableStart)]+table+doc[j:]), 0o644))
			return
		}
		t.Fatalf("README.md's per-token table is stale; the plans give:\n%s", table)
	}
}

// BenchmarkEncode measures the Go side of encoding: patches, LaunchFor
// (the test launch rule), Args, bounds, hazards, redundant-binding
// elimination, per-dispatch scratch, against a fake encoder that records
// nothing. Reported per plan dispatch.
func BenchmarkEncode(b *testing.B) {
	b.Run("stories260K-decode-64-tokens", func(b *testing.B) {
		c, _ := loadStories(b)
		benchChain(b, c, decodeChain(10, 64))
	})
	b.Run("whisper-tiny.en-q8_0-decoder-token", func(b *testing.B) {
		c, _ := loadWhisper(b, "ggml-kit-tiny.en-q8_0.bin", 1)
		var st []Step
		for i := range 64 {
			st = append(st, Step{Pass: whisper.PassStep, Vars: plan.Vars{plan.VarPos: int64(i), plan.VarNTok: 1, plan.VarKVLen: int64(i + 1)}})
		}
		benchChain(b, c, st)
	})
}

func benchChain(b *testing.B, c *capture, steps []Step) {
	c.dev.record = false
	x := c.x
	before := x.Stats().Dispatches
	calls := c.dev.calls
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := x.RunSteps(steps, len(steps), nil); err != nil {
			b.Fatal(err)
		}
		c.dev.cbs = c.dev.cbs[:0]
		c.dev.log = c.dev.log[:0]
	}
	el := time.Since(start)
	n := x.Stats().Dispatches - before
	b.ReportMetric(float64(el.Nanoseconds())/float64(n), "ns/dispatch")
	b.ReportMetric(float64(c.dev.calls-calls)/float64(n), "msgs/dispatch")
}
