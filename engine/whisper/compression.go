package whisper

import (
	"bytes"
	"compress/zlib"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CompressionRatio is len(text)/len(zlib(text)), the reference's
// repetition detector: above 2.4 a window is decoded again, hotter.
//
// The reference measures with the zlib library at its default level. Go's
// compress/zlib finds different matches (a short sentence compresses to 86
// bytes where zlib gives 79), which would move the fallback threshold, so
// the system's zlib is used through purego when it can be loaded (it is on
// every Linux distribution and macOS); Go's compressor is the fallback.
func CompressionRatio(text string) float64 {
	if text == "" {
		return 0
	}
	n, ok := systemZlibSize([]byte(text))
	if !ok {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		_, _ = w.Write([]byte(text)) // into a bytes.Buffer: cannot fail
		w.Close()
		n = b.Len()
	}
	return float64(len(text)) / float64(n)
}

var (
	zlibOnce     sync.Once
	zlibCompress func(dst *byte, dstLen *uint64, src *byte, srcLen uint64, level int32) int32
)

func loadZlib() {
	names := []string{"libz.so.1", "libz.so"}
	if runtime.GOOS == "darwin" {
		names = []string{"/usr/lib/libz.1.dylib", "libz.dylib"}
	}
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			continue
		}
		purego.RegisterLibFunc(&zlibCompress, h, "compress2")
		return
	}
}

// systemZlibSize is the size of zlib's compress2 output at the default level.
func systemZlibSize(src []byte) (int, bool) {
	zlibOnce.Do(loadZlib)
	if zlibCompress == nil || unsafe.Sizeof(uintptr(0)) != 8 {
		return 0, false
	}
	dst := make([]byte, len(src)+len(src)/1000+64)
	dstLen := uint64(len(dst))
	const defaultLevel = -1
	if rc := zlibCompress(&dst[0], &dstLen, &src[0], uint64(len(src)), defaultLevel); rc != 0 {
		return 0, false
	}
	return int(dstLen), true
}
