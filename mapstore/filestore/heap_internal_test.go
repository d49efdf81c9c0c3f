package filestore

import (
	"runtime"
	"testing"
)

// forcedGCs returns how many collections runtime.GC has run.
func forcedGCs() uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.NumForcedGC
}

// A read that is most of the heap is collected after; a small read, or
// one that is a small part of a larger heap, is not.
func TestCollectAfterRead(t *testing.T) {
	runtime.GC()
	buf := make([]byte, collectAfterReadMin)
	for i := range buf {
		buf[i] = byte(i)
	}
	before := forcedGCs()
	collectAfterRead(int64(len(buf)))
	if got := forcedGCs() - before; got != 1 {
		t.Fatalf("after a read of %d bytes that are most of the heap: %d collections, want 1", len(buf), got)
	}
	before = forcedGCs()
	collectAfterRead(collectAfterReadMin - 1)
	if got := forcedGCs() - before; got != 0 {
		t.Fatalf("after a read under %d bytes: %d collections, want 0", collectAfterReadMin, got)
	}
	big := make([][]byte, 4)
	for i := range big {
		big[i] = make([]byte, collectAfterReadMin)
		big[i][0] = 1
	}
	before = forcedGCs()
	collectAfterRead(int64(len(buf)))
	if got := forcedGCs() - before; got != 0 {
		t.Fatalf("after a read that is a fifth of the heap: %d collections, want 0", got)
	}
	runtime.KeepAlive(buf)
	runtime.KeepAlive(big)
}
