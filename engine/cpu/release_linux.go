package cpu

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// releasePages gives back the resident pages wholly inside each of bs
// where it lies in a read-only file mapping (a model's weights mapped by
// package mapfile): a later read faults the page in again from the file,
// so nothing is lost. Memory of any other kind (the Go heap, a writable
// or anonymous mapping) is left alone, since dropping it would lose its
// contents. It returns the bytes released.
func releasePages(bs [][]byte) int64 {
	maps, err := fileMappings()
	if err != nil {
		return 0
	}
	page := uintptr(os.Getpagesize())
	var n int64
	for _, b := range bs {
		if len(b) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		hi := lo + uintptr(len(b))
		if maps.covers(lo, hi) {
			n += dontNeed(b, page)
		}
	}
	return n
}

// dropPages gives back the pages wholly inside b, which must lie in an
// anonymous private mapping (mapAnon): they read as zeros when next
// touched, each faulting in a fresh page. It returns the bytes given
// back.
func dropPages(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	return dontNeed(b, uintptr(os.Getpagesize()))
}

// dontNeed advises the kernel that the pages wholly inside b are not
// needed (MADV_DONTNEED: dropped now, not at the next memory pressure as
// with MADV_FREE, so VmRSS shows it), and returns their bytes.
func dontNeed(b []byte, page uintptr) int64 {
	p0 := unsafe.Pointer(unsafe.SliceData(b))
	lo := uintptr(p0)
	plo, phi := (lo+page-1)&^(page-1), (lo+uintptr(len(b)))&^(page-1)
	if phi <= plo {
		return 0
	}
	r := unsafe.Slice((*byte)(unsafe.Add(p0, plo-lo)), phi-plo)
	if unix.Madvise(r, unix.MADV_DONTNEED) != nil {
		return 0
	}
	return int64(phi - plo)
}

// mappings are address ranges [lo, hi).
type mappings [][2]uintptr

func (m mappings) covers(lo, hi uintptr) bool {
	for _, r := range m {
		if r[0] <= lo && hi <= r[1] {
			return true
		}
	}
	return false
}

// fileMappings lists this process's read-only mappings of files, from
// /proc/self/maps ("lo-hi perms offset dev inode path"), adjacent ones
// merged so that a range spanning two mappings of one file is covered.
func fileMappings() (mappings, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m mappings
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		fs := bytes.Fields(sc.Bytes())
		if len(fs) < 6 || len(fs[1]) < 2 || fs[1][1] != '-' || string(fs[4]) == "0" {
			continue // writable, or anonymous (inode 0)
		}
		dash := bytes.IndexByte(fs[0], '-')
		if dash < 0 {
			continue
		}
		lo, err1 := strconv.ParseUint(string(fs[0][:dash]), 16, 64)
		hi, err2 := strconv.ParseUint(string(fs[0][dash+1:]), 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if k := len(m) - 1; k >= 0 && m[k][1] == uintptr(lo) {
			m[k][1] = uintptr(hi)
			continue
		}
		m = append(m, [2]uintptr{uintptr(lo), uintptr(hi)})
	}
	return m, sc.Err()
}
