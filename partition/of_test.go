package partition_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/stowage/stowage/internal/testutil/golden"
	"github.com/stowage/stowage/partition"
)

// TestOfIsPinned pins partition.Of for a table of keys and partition
// counts against testdata/of.golden. Stored data is placed by this hash
// (META records it as HashID), so changing it must be deliberate: it is a
// visible diff of the golden file, and a new HashID.
func TestOfIsPinned(t *testing.T) {
	keys := [][]byte{
		nil,
		[]byte("a"),
		[]byte("job-1"),
		[]byte("engine_jobInfo"),
		[]byte("\x00\xff\x00"),
		[]byte("\x92\xa5job-1\x01"), // a msgpack-encoded key: ["job-1", 1]
		bytes.Repeat([]byte("k"), 1000),
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# partition.Of(key, count); hash %s\n", partition.HashID)
	for _, count := range []int{1, 7, partition.DefaultCount, 1 << 16} {
		for _, k := range keys {
			p := partition.Of(k, count)
			if p < 0 || p >= count {
				t.Fatalf("Of(%q, %d) = %d, out of range", k, count, p)
			}
			key := strconv.Quote(string(k))
			if len(k) > 32 {
				key = fmt.Sprintf("%q x %d", k[:1], len(k))
			}
			fmt.Fprintf(&out, "%d\t%s\t%d\n", count, key, p)
		}
	}
	if partition.HashID != "xxh64" {
		t.Errorf("HashID = %q: a new key hash needs a new golden file and a re-hash of stored maps", partition.HashID)
	}
	golden.Check(t, "testdata/of.golden", out.Bytes(), "a hash change")
}
