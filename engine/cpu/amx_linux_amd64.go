package cpu

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

func xgetbv0() (eax, edx uint32)

// amxSelfTest runs qgemmAMX on random tiles (two groups a run) with every
// block count up to two chunks of four (each remainder path), the last
// with extreme codes, against qgemmVNNI: they must agree bit for bit. It
// executes AMX instructions, so it runs only where a SIGILL cannot kill
// the caller (the probe child, or tests after the probe said yes).
func amxSelfTest() error {
	r := rand.New(rand.NewPCG(37, 1))
	for nb := 1; nb <= 9; nb++ {
		if err := amxCheckRun(r, nb, 2, nb == 9); err != nil {
			return err
		}
	}
	return nil
}

// amxCheckRun compares one AMX run of tiles groups × nb blocks with the
// VNNI kernel tile by tile; extreme sets every weight code to 255 and
// every activation code to −128.
func amxCheckRun(r *rand.Rand, nb, tiles int, extreme bool) error {
	const tsz = qTileRows * qTileCols
	gb := nb * qTileRows * qActBlock
	panel := make([]byte, nb*qPanelBlock)
	act := make([]byte, tiles*gb)
	for g := 0; g < tiles; g++ {
		randQTiles(r, panel, act[g*gb:(g+1)*gb], 255)
	}
	if extreme {
		for b := 0; b < nb; b++ {
			for i := 0; i < 512; i++ {
				panel[b*qPanelBlock+i] = 255
			}
		}
		for blk := 0; blk < len(act)/qActBlock; blk++ {
			for e := 0; e < 32; e++ {
				act[blk*qActBlock+e] = 0x80
			}
		}
	}
	got := make([]float32, tiles*tsz)
	qgemmAMXRun(panel, act, nb, tiles, got)
	for g := 0; g < tiles; g++ {
		var want [tsz]float32
		qgemmVNNITile(panel, act[g*gb:(g+1)*gb], nb, &want)
		for i, v := range want {
			if w := got[g*tsz+i]; w != v {
				return fmt.Errorf("qgemmAMX nb=%d tile %d of %d out[%d] = %g, VNNI %g", nb, g, tiles, i, w, v)
			}
		}
	}
	return nil
}

// amxAllowed reports why the AMX kernel is not to be tried at all.
func amxAllowed() error {
	if os.Getenv(amxEnv) == "0" {
		return errors.New(amxEnv + "=0")
	}
	if !hasVNNI {
		return errors.New("no AVX-512 VNNI: the AMX kernel scales its sums with AVX-512 and checks itself against the VNNI kernel")
	}
	return nil
}
