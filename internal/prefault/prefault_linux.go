package prefault

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

var pageSize = uintptr(os.Getpagesize())

// populate asks for the whole pages within b (madvise takes page-aligned
// ranges only).
func populate(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	from := ((start+pageSize-1)&^(pageSize-1) - start)
	to := ((start+uintptr(len(b)))&^(pageSize-1) - start)
	if to <= from {
		return
	}
	_ = unix.Madvise(b[from:to], unix.MADV_POPULATE_WRITE)
}
