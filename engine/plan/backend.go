package plan

import "context"

// Backend turns a plan into something it can execute. Model code depends on
// this interface only; it never calls a backend's kernels directly.
type Backend interface {
	Name() string
	// Load allocates the plan's buffers (mapping or uploading weights) and
	// prepares its passes.
	Load(p *Plan) (Executable, error)
}

// Executable is a loaded plan.
type Executable interface {
	// Run replays pass number pass once with the given step variables.
	Run(pass int, vars *Vars) error
	// RunSeq replays pass once per entry of steps, in order, without
	// returning to the host in between where the backend can (a GPU chains
	// them in one command buffer).
	RunSeq(pass int, steps []Vars) error
	// Write and Read move bytes between host memory and a buffer.
	Write(buf BufID, off int64, src []byte) error
	Read(buf BufID, off int64, dst []byte) error
	// Close releases the buffers.
	Close() error
}

// Chainer is implemented by executables that replay a sequence of steps,
// each of its own pass, without returning to the host in between (a GPU
// encodes chunk steps per command buffer). Step i replays passes[i] with
// vars[i]. done, if set, is called after each chunk with the number of
// steps completed so far; returning false stops the chain (steps already
// submitted may still run; their results are to be ignored). It returns
// the number of steps completed before the stop or an error. chunk <= 0
// means the backend's default.
type Chainer interface {
	RunPasses(passes []int, vars []Vars, chunk int, done func(completed int) bool) (int, error)
}

// Joiner is implemented by executables that can run several passes as
// one unit of their work: RunJoined runs passes[i] with vars[i] in order,
// with the results of running them one by one, and returns once all are
// done. The CPU backend runs them as one pool pass (its workers awake
// from one pass to the next, no other plan's pass between them); a batch
// step and its draws go through it (llm.Batch.StepSample). Executables
// without it run the passes one Run each.
type Joiner interface {
	RunJoined(passes []int, vars []Vars) error
}

// ChainIO are the host transfers of a chain (IOChainer): len(Src) bytes
// written to In from byte InOff before the first step, and len(Dst) bytes
// read from Out at byte OutOff into Dst (and each of Also's) after every
// chunk, before done. Halt, if set, is the chain's halt word. Lead steps
// (a prompt, whose shape changes from chain to chain) go before the first
// chunk, which counts them, and the chunks start after them: a GPU issues
// them without a wait of their own, and its chunks keep their shapes, so
// each replays a graph recorded by an earlier chain.
type ChainIO struct {
	In     BufID
	InOff  int64
	Src    []byte
	Out    BufID
	OutOff int64
	Dst    []byte
	Also   []ChainRead
	Halt   *ChainHalt
	Lead   int
}

// ChainRead is a further read-back of a chain: len(Dst) bytes of Buf from
// byte Off, read as ChainIO.Dst is.
type ChainRead struct {
	Buf BufID
	Off int64
	Dst []byte
}

// ChainHalt is a chain's halt word: the int32 at byte Off of Buf. Once it
// differs from Running, a backend that honours it skips every dispatch of
// the chain's steps from step From on (the CUDA backend: each kernel
// reads the word first and returns), so the steps a chunk runs past the
// stop of a decode cost a launch each, not their work. The word is the
// model's own state (a Whisper track's status), written by a dispatch of
// an earlier step, or by a one-threadgroup kernel after every thread has
// read it (whisper_track, whisper_beams); steps before From run whatever
// it holds (they set it). Skipped steps must write nothing read later: the
// done callback still sees the completed count of the steps issued. A
// backend may ignore the halt (Metal, the CPU, whose chains stop at the
// host's look after every step): the steps then run, only slower.
type ChainHalt struct {
	Buf     BufID
	Off     int64
	Running int32
	From    int
}

// IOChainer is a Chainer that moves a chain's input and read-backs
// (ChainIO) inside the chunks' own waits (a GPU queues the copies before
// and behind the chunk's work), so a decode that hands over its prompt
// and checks its state every chunk waits once a chunk and never besides.
type IOChainer interface {
	RunPassesIO(passes []int, vars []Vars, chunk int, io *ChainIO, done func(completed int) bool) (int, error)
}

// Canceler is implemented by executables that can stop a pass between its
// dispatches: RunCtx is Run, except that once ctx is done the pass stops
// before its next dispatch and returns ctx's error, its outputs left
// unfinished. A pass whose result nobody will read (a stream's partial
// decode at the release of the hotkey) then costs at most one dispatch
// more instead of the rest of the pass.
type Canceler interface {
	RunCtx(ctx context.Context, pass int, vars *Vars) error
}
