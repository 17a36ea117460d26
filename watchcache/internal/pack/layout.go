package pack

import (
	"slices"
	"unsafe"
)

// layout returns enc, key and vals as strings: views of one new
// allocation holding the three when the allocator's size classes make
// that no larger than their own allocations, else a copy of enc, and key
// and vals as they are. An encoded element of about 1 KiB typically saves two
// small allocations (49 bytes an object, BenchmarkMemoryEncoded: see the
// package doc).
func layout(enc []byte, key, vals string) (string, string, string) {
	n := len(enc) + len(key) + len(vals)
	if allocSize(n) > allocSize(len(enc))+allocSize(len(key))+allocSize(len(vals)) {
		return string(enc), key, vals
	}
	buf := make([]byte, 0, n)
	buf = append(buf, enc...)
	buf = append(buf, key...)
	buf = append(buf, vals...)
	s := unsafe.String(unsafe.SliceData(buf), n) // buf is never written again
	nEnc, nKey := len(enc), len(enc)+len(key)
	return s[:nEnc], s[nEnc:nKey], s[nKey:]
}

// sizeClasses are the Go allocator's size classes up to 32 KiB (see
// runtime/sizeclasses.go); larger objects take whole 8 KiB pages.
// TestSizeClassesAreTheRuntimes checks them against the running runtime.
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240,
	256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408,
	1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192,
	9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768}

// allocSize is the memory an allocation of n bytes takes. It only steers
// layout; an outdated table costs memory, never correctness.
func allocSize(n int) int {
	if n == 0 {
		return 0
	}
	if n > sizeClasses[len(sizeClasses)-1] {
		const page = 8 << 10
		return (n + page - 1) / page * page
	}
	i, _ := slices.BinarySearch(sizeClasses[:], n)
	return sizeClasses[i]
}

// Bytes returns the bytes of s without copying them, for a reader of an
// encoding kept as a string (an element's encoding, which Layout may have
// placed in one allocation with other strings). They must not be modified.
func Bytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
