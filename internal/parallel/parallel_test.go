package parallel_test

import (
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage/internal/parallel"
)

func TestDoCallsEachOnceWithinTheBound(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 64} {
		var calls [100]atomic.Int32
		var running, most atomic.Int32
		parallel.Do(workers, len(calls), func(i int) {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			calls[i].Add(1)
			running.Add(-1)
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("workers %d: fn(%d) called %d times", workers, i, c)
			}
		}
		if m := most.Load(); m > int32(max(workers, 1)) {
			t.Fatalf("workers %d: %d calls ran at once", workers, m)
		}
	}
	parallel.Do(4, 0, func(int) { t.Fatal("called with count 0") })
}
