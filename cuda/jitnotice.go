package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Startup is how long opening a GPU took, by part, so a slow first run
// can be told apart: the driver's start (dlopen and cuInit: once per
// process, zero for later devices), the context (the primary context and
// the streams) and the kernels (the modules, compiled by the driver's JIT
// when no prebuilt cubin matches: tens of seconds on a fresh machine for
// the 10 MB base module, then served from the driver's compute cache).
type Startup struct {
	Driver, Context, Kernels time.Duration
}

func (s Startup) String() string {
	return fmt.Sprintf("driver start %.2f s, context %.2f s, kernels %.2f s", s.Driver.Seconds(), s.Context.Seconds(), s.Kernels.Seconds())
}

// jitNotice tells the user, once per GPU model and kernel version, that
// the kernels are being compiled for their GPU: the first load of the PTX
// on a machine can take a minute with nothing else to show for it, and
// the driver's cache makes later loads fast, so a note each time would be
// noise. A mark file in dir remembers that this GPU compiled this PTX.
type jitNotice struct {
	o    Options
	jit  bool   // the base module is compiled by the driver
	mark string // the mark file, or "" when there is none to keep
}

// newJITNotice returns the notice for compiling the base module's PTX on
// in's GPU; it says nothing without Options.Notice, nor once the mark
// exists (but the times with Options.ReportStartup). Without JIT the
// notice is jitNotice{o: o}: the times at most.
func newJITNotice(o Options, in Info, ptxHash string) jitNotice {
	if o.Notice == nil {
		return jitNotice{o: o}
	}
	dir := o.JITMarks
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return jitNotice{o: o, jit: true} // no place to remember: tell every time
		}
		dir = filepath.Join(c, "hark", "cuda-jit")
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%d", ptxHash, in.Name, in.Compute, in.Driver))
	return jitNotice{o: o, jit: true, mark: filepath.Join(dir, hex.EncodeToString(h[:12]))}
}

// before is said before the modules load.
func (n jitNotice) before(in Info) {
	if !n.jit || n.seen() {
		return
	}
	fmt.Fprintf(n.o.Notice, "hark: preparing the GPU kernels for %s (sm_%d), once: the driver compiles them for this GPU (up to a minute) and keeps them for later runs\n",
		in.Name, in.Compute)
}

// after is said once the modules loaded, and remembers this GPU.
func (n jitNotice) after(s Startup) {
	tell := n.jit && !n.seen()
	if n.o.Notice == nil || !tell && !n.o.ReportStartup {
		return
	}
	fmt.Fprintf(n.o.Notice, "hark: GPU kernels ready (%s)\n", s)
	if tell && n.mark != "" && os.MkdirAll(filepath.Dir(n.mark), 0o755) == nil {
		_ = os.WriteFile(n.mark, nil, 0o644) // unwritable: the note comes again next time
	}
}

func (n jitNotice) seen() bool {
	if n.mark == "" {
		return false
	}
	_, err := os.Stat(n.mark)
	return err == nil
}
