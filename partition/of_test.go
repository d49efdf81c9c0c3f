package partition_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stowage/stowage/partition"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

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
	golden(t, "testdata/of.golden", out.Bytes())
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (a hash change must be deliberate; rerun with -update):\n got:\n%s\nwant:\n%s", path, got, want)
	}
}
