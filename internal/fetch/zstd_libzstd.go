//go:build cgo && zkconsumer_libzstd

package fetch

// The zkconsumer_libzstd build tag (with cgo, and libzstd's headers and
// library installed: libzstd-dev on Debian) decodes zstd batches with the
// C library, as librdkafka (kcat) and the Java client (zstd-jni) do. On the
// clients benchmark's zstd topic, on a quiet machine, a connector built with
// the tag read at 1.08× kcat's msgs/s at 1.08× its CPU per GB, where the
// default build read at 0.92× at 1.25× (medians of per-round ratios, five
// alternating rounds; BENCHMARKS.md, "Settings that change throughput"): a
// small gain. The pure Go decoder stays the default: a build without the tag
// needs no C toolchain. Only whole frames whose output is known to fit (the
// common case: producers declare the content size) go to libzstd; the rest,
// and streamed batches, stay with the Go decoder, which also enforces the
// limits.

// #cgo LDFLAGS: -lzstd
// #include <zstd.h>
// static size_t zk_window_limit(ZSTD_DCtx* d, int log) {
//     return ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, log);
// }
import "C"

import (
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
)

// libzstdContexts hands out GOMAXPROCS decompression contexts, one per
// concurrent decoding; they live as long as the process.
var libzstdContexts = sync.OnceValue(func() chan *C.ZSTD_DCtx {
	n := runtime.GOMAXPROCS(0)
	ch := make(chan *C.ZSTD_DCtx, n)
	for range n {
		d := C.ZSTD_createDCtx()
		if d == nil {
			continue
		}
		C.zk_window_limit(d, C.int(bits.TrailingZeros(zstdMaxWindow)))
		ch <- d
	}
	return ch
})

func init() {
	libzstd = func(data, dst []byte) ([]byte, bool, error) {
		if len(data) == 0 || cap(dst) == 0 {
			return nil, false, nil
		}
		ctxs := libzstdContexts()
		var d *C.ZSTD_DCtx
		select {
		case d = <-ctxs:
		default:
			return nil, false, nil
		}
		n := C.ZSTD_decompressDCtx(d, unsafe.Pointer(&dst[:1][0]), C.size_t(cap(dst)), unsafe.Pointer(&data[0]), C.size_t(len(data)))
		ctxs <- d
		if C.ZSTD_isError(n) != 0 {
			return nil, true, errors.New("zstd: " + C.GoString(C.ZSTD_getErrorName(n)))
		}
		return dst[:int(n)], true, nil
	}
}
