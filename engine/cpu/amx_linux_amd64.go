package cpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// AMX detection. A CPU flag is not enough: a KVM guest can list amx_* and
// still raise SIGILL (or #NM the guest kernel cannot serve) on the first
// tile instruction, and SIGILL is fatal in Go. So: CPUID's AMX-TILE and
// AMX-INT8 bits, XCR0's tile state bits (17-18: the OS saves tiles), the
// kernel's permission for the tile data (arch_prctl ARCH_REQ_XCOMP_PERM,
// Linux 5.16+; granted process-wide, and refused if a thread's signal
// stack could not hold the ~11 KB signal frame: Go's are 32 KB), then the
// binary re-executed as a child with amxProbeEnv set, which runs the
// kernel on known data and says whether it matched the VNNI kernel. The
// answer is cached once per process.
const (
	archGetXCompPerm  = 0x1022
	archReqXCompPerm  = 0x1023
	xfeatureXTileData = 18
	amxProbeEnv       = "HARK_AMX_PROBE"
	amxProbeOK        = "hark-amx-probe: ok"
)

// The probe child: this package's init runs before main (or the tests),
// so any binary linking it answers and exits here.
func init() {
	if os.Getenv(amxProbeEnv) != "1" {
		return
	}
	err := amxAllowed()
	if err == nil {
		err = amxPrecheck()
	}
	if err == nil {
		err = amxSelfTest()
	}
	if err != nil {
		fmt.Println("hark-amx-probe:", err)
	} else {
		fmt.Println(amxProbeOK)
	}
	os.Exit(0)
}

var amxOnce struct {
	sync.Once
	err error
}

// amxWorks returns nil where the AMX kernel may run in this process, or
// why not; the first call runs the checks and the child (tens of ms).
func amxWorks() error {
	amxOnce.Do(func() { amxOnce.err = amxCheck() })
	return amxOnce.err
}

func amxCheck() error {
	if err := amxAllowed(); err != nil {
		return err
	}
	if err := amxPrecheck(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("AMX probe: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), amxProbeEnv+"=1")
	out, err := cmd.Output()
	if err != nil { // a SIGILL in the child lands here
		return fmt.Errorf("AMX probe child: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; last != amxProbeOK {
		return fmt.Errorf("AMX probe child said %q", last)
	}
	return nil
}

// amxPrecheck checks the CPU and OS without running a tile instruction,
// and asks the kernel for the tile data permission.
func amxPrecheck() error {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXInt8 {
		return errors.New("CPUID lists no AMX-TILE and AMX-INT8")
	}
	if !cpu.X86.HasOSXSAVE {
		return errors.New("no OSXSAVE: XCR0 cannot be read")
	}
	if xcr0, _ := xgetbv0(); xcr0>>17&3 != 3 {
		return fmt.Errorf("XCR0 %#x lacks the tile state (bits 17-18)", xcr0)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXCompPerm, xfeatureXTileData, 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA): %w", e)
	}
	var perm uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXCompPerm, uintptr(unsafe.Pointer(&perm)), 0); e != 0 {
		return fmt.Errorf("arch_prctl(ARCH_GET_XCOMP_PERM): %w", e)
	}
	if perm>>xfeatureXTileData&1 == 0 {
		return fmt.Errorf("tile data not permitted (xcomp perm %#x)", perm)
	}
	return nil
}
