package filestore

import (
	"runtime"
	"runtime/metrics"
)

// After Open has read the log, the heap is mostly the files' bytes, which
// hold no pointers, and the partitions' loads come next: they build maps
// whose every slot holds pointers, the costliest memory for the garbage
// collector to mark. With the default pacing, the collection that the
// read brings about next tends to fall in the middle of those loads and
// mark the maps half built (a tenth of a second and more of processor
// time for a million entries, a third of it taken from the loads as
// assists). A collection right after the read marks next to nothing and
// sets the next goal at twice what the read left, above what the maps
// add, so the loads run without one. It changes no setting of the
// garbage collector.

// collectAfterReadMin is the least a read must have read for Open to
// collect after it: below it, the loads that follow are too small for a
// collection to fall among them often or to cost much when it does.
const collectAfterReadMin = 64 << 20

// collectAfterRead runs a garbage collection after a read of n bytes of
// log files if those bytes are at least half of the heap (else the
// collection would mark mostly memory that is not the read's, and the
// read would not bring the next one about soon).
func collectAfterRead(n int64) {
	if n < collectAfterReadMin {
		return
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[0].Value.Uint64() > 2*uint64(n) {
		return
	}
	runtime.GC()
}
