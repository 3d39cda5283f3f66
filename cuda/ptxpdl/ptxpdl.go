// Package ptxpdl prepares the base module's PTX for programmatic dependent
// launch (PDL) on compute capability 9.0 and newer: each kernel's grid may
// then be launched while the kernel before it in the stream (or CUDA
// graph) still runs, so the launch's latency hides behind that kernel's
// tail. A decode step is hundreds of short dependent launches, and in a
// graph each still costs a few microseconds of launch and ramp-up.
//
// Patch makes every entry wait for the grids it depends on
// (griddepcontrol.wait) before its first instruction, so nothing it
// reads or writes is touched before its predecessor's writes are
// visible; an entry that places the wait itself (WaitMarker: the
// pre-quantized mat-vecs, which load their first weights first) keeps
// it there. A kernel's dependents are then let in as its blocks exit (the
// implicit trigger): an explicit griddepcontrol.launch_dependents at
// each entry's start, which lets the next grid's blocks take their place
// on the SMs while this one runs, measured 3-10% slower on the H200
// (BENCHMARKS.md, "Programmatic dependent launch"). The wait needs PTX
// ISA 7.8 and sm_90; without the launch attribute it returns at once. The stored PTX stays
// at sm_75 for every other GPU; the cuda package patches it for a 9.x
// GPU's JIT, and bench/cuda/cubins.sh (through this package's command)
// for the sm_90 cubin.
package ptxpdl

import (
	"bytes"
	"fmt"
	"regexp"
)

// MinCompute is the oldest compute capability (major*10+minor) with
// griddepcontrol.
const MinCompute = 90

// Arch is the target Patch writes.
const Arch = "sm_90"

const version = "7.8"

var (
	versionLine = regexp.MustCompile(`(?m)^\.version (\d+)\.(\d+)$`)
	targetLine  = regexp.MustCompile(`(?m)^\.target sm_(\d+)(a?)$`)
)

// wait is what each entry runs first.
const wait = "\tgriddepcontrol.wait;\n"

// WaitMarker and LaunchMarker are what cuda/cxx/msl_cuda.h's pdl_wait and
// pdl_launch_dependents leave in the PTX (inline-asm comments): Patch
// writes griddepcontrol.wait and griddepcontrol.launch_dependents in their
// place, and an entry with the wait's marker gets no wait at its start
// (the kernel has put it after what may run before its predecessor ends).
const (
	WaitMarker   = "// hark:pdl-wait"
	LaunchMarker = "// hark:pdl-launch"
)

// Patch returns ptx with ISA 7.8 (or its own, if newer), target sm_90
// (or its own, if 9.0 or newer: sm_90a), and every .entry's body starting with the wait. The body's leading
// declarations (registers, shared and local variables) stay first.
// It refuses PTX that does not look like one module of entries.
func Patch(ptx []byte) ([]byte, error) {
	v := versionLine.FindSubmatchIndex(ptx)
	if v == nil {
		return nil, fmt.Errorf("ptxpdl: no .version line")
	}
	t := targetLine.FindSubmatchIndex(ptx)
	if t == nil || t[0] < v[1] {
		return nil, fmt.Errorf("ptxpdl: no .target line after .version")
	}
	major, minor := atoi(ptx[v[2]:v[3]]), atoi(ptx[v[4]:v[5]])
	out := make([]byte, 0, len(ptx)+len(ptx)/64)
	out = append(out, ptx[:v[0]]...)
	if major > 7 || (major == 7 && minor >= 8) {
		out = append(out, ptx[v[0]:v[1]]...)
	} else {
		out = append(out, ".version "+version...)
	}
	out = append(out, ptx[v[1]:t[0]]...)
	if atoi(ptx[t[2]:t[3]]) >= MinCompute { // sm_90a stays itself
		out = append(out, ptx[t[0]:t[1]]...)
	} else {
		out = append(out, ".target "+Arch...)
	}
	rest := ptx[t[1]:]
	entries := 0
	for len(rest) > 0 {
		i := bytes.Index(rest, []byte(".entry "))
		if i < 0 {
			out = append(out, rest...)
			break
		}
		// the entry's body: its first line that is only "{"
		b := bytes.Index(rest[i:], []byte("\n{\n"))
		if b < 0 {
			return nil, fmt.Errorf("ptxpdl: entry %d has no body", entries+1)
		}
		body := i + b + 3
		out = append(out, rest[:body]...)
		rest = rest[body:]
		for len(rest) > 0 {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 || !declaration(rest[:nl]) {
				break
			}
			out = append(out, rest[:nl+1]...)
			rest = rest[nl+1:]
		}
		end := bytes.Index(rest, []byte(".entry "))
		if end < 0 {
			end = len(rest)
		}
		if !bytes.Contains(rest[:end], []byte(WaitMarker)) {
			out = append(out, wait...)
		}
		entries++
	}
	if entries == 0 {
		return nil, fmt.Errorf("ptxpdl: no .entry")
	}
	out = bytes.ReplaceAll(out, []byte(WaitMarker), []byte("griddepcontrol.wait;"))
	return bytes.ReplaceAll(out, []byte(LaunchMarker), []byte("griddepcontrol.launch_dependents;")), nil
}

// declaration says whether a body line is a leading declaration (or a
// comment or blank line among them).
func declaration(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	for _, p := range []string{".reg ", ".shared ", ".local ", ".pragma ", "//"} {
		if bytes.HasPrefix(t, []byte(p)) {
			return true
		}
	}
	return len(t) == 0
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}
