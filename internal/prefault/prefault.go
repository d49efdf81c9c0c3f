// Package prefault has the kernel provide the pages of a fresh buffer in
// one call, before it is filled.
//
// A buffer the size of a file, freshly allocated, is backed by no memory
// yet: the read that fills it takes a page fault, a trap into the kernel,
// for each 4 KiB it reaches. Asked for beforehand, the pages come in one
// system call without the traps (Linux's MADV_POPULATE_WRITE, 5.14 and
// later); elsewhere, or on an older kernel, Bytes does nothing and the
// read faults the pages in as before.
package prefault

// minSize is the smallest buffer worth the call: below it, the faults
// the call saves cost less than the call.
const minSize = 1 << 20

// Bytes has the kernel provide the whole pages of b now. It never fails:
// what it cannot do is left to the page faults.
func Bytes(b []byte) {
	if len(b) < minSize {
		return
	}
	populate(b)
}
