package prefault

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of b the kernel has provided.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+int(pageSize)-1)/int(pageSize))
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// Bytes has every whole page of a buffer provided at once; a buffer below
// the minimum is left to its faults.
func TestBytesProvidesThePages(t *testing.T) {
	for _, c := range []struct {
		size int
		want func(pages int) int
	}{
		{8 << 20, func(pages int) int { return pages }},
		{minSize / 2, func(int) int { return 0 }},
	} {
		b, err := unix.Mmap(-1, 0, c.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		pages := c.size / int(pageSize)
		if n := resident(t, b); n != 0 {
			t.Fatalf("%d of a fresh mapping's %d pages resident before Bytes", n, pages)
		}
		Bytes(b)
		if n, want := resident(t, b), c.want(pages); n != want {
			t.Errorf("%d bytes: %d of %d pages resident after Bytes, want %d", c.size, n, pages, want)
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("byte %d is %d after Bytes, want 0", i, b[i])
			}
		}
		if err := unix.Munmap(b); err != nil {
			t.Fatal(err)
		}
	}
}
