package filestore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// replayAll returns, per partition, what ReplayPartition gives, in order,
// one line per record, and each partition's last version.
func replayAll(t *testing.T, s *filestore.Store) []string {
	t.Helper()
	out := make([]string, s.Partitions())
	for p := range out {
		var b strings.Builder
		err := s.ReplayPartition(context.Background(), p, func(r mapstore.Record) error {
			fmt.Fprintf(&b, "%v %q %q %v %d\n", r.Version, r.Key, r.Value, r.Deleted, r.Expires)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "last %v\n", s.LastVersion(p))
		out[p] = b.String()
	}
	return out
}

// TestRangedReadGivesWhatOrderedReadGives writes a log segment large
// enough to be checked in ranges in parallel on local disk, and compares
// what loads from it with what the ordered read of the whole file (as on
// HDFS and object stores) gives: the same records in the same order, and,
// with a damaged frame or length in the middle or a torn tail, the same
// damage reported and everything else loaded.
func TestRangedReadGivesWhatOrderedReadGives(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	ctx := context.Background()
	var batch []mapstore.Record
	for i := 0; i < 64_000; i++ {
		k := fmt.Sprintf("k%05d", i%30_000) // some keys twice
		del := i%97 == 0
		val := []byte(strings.Repeat(string(rune('a'+i%26)), 200+i%300))
		if del {
			val = nil
		}
		if batch = append(batch, m.next(k, val, del)); len(batch) == 1000 {
			if err := s.StoreAll(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	s.Close()
	logs := logFiles(t, e.dir)
	if len(logs) != 1 {
		t.Fatalf("want 1 log segment, have %v", logs)
	}
	clean, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(clean) < 20<<20 {
		t.Fatalf("log is %d bytes, want over 20 MiB (several ranges)", len(clean))
	}
	mid := bytes.Index(clean[10<<20:], []byte("k1")) + 10<<20
	for _, c := range []struct {
		name  string
		spoil func(b []byte) []byte
	}{
		{"clean", func(b []byte) []byte { return b }},
		{"damaged frame", func(b []byte) []byte { b[mid] ^= 0xFF; return b }},
		{"damaged length", func(b []byte) []byte {
			i := bytes.LastIndex(b[:mid], []byte{0xF7, 0x5A})
			b[i+6] ^= 0x40
			return b
		}},
		{"torn tail", func(b []byte) []byte { return b[:len(b)-7] }},
		{"zeros written ahead", func(b []byte) []byte { return append(b, make([]byte, 1<<20)...) }},
		{"torn tail before zeros", func(b []byte) []byte { return append(b[:len(b)-7], make([]byte, 1<<20)...) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := c.spoil(append([]byte(nil), clean...))
			if err := os.WriteFile(logs[0], data, 0o644); err != nil {
				t.Fatal(err)
			}
			load := func(ordered bool) ([]string, []filestore.Damage) {
				t.Helper()
				le := &env{t: t, dir: e.dir, fs: e.fs}
				if ordered {
					le.fs = wholeFileFS{e.fs}
				}
				s := le.open(filestore.Options{})
				defer s.Close()
				return replayAll(t, s), le.damages
			}
			ranged, rangedDamage := load(false)
			ordered, orderedDamage := load(true)
			for p := range ranged {
				if ranged[p] != ordered[p] {
					t.Errorf("partition %d: read in ranges gives\n%.400s\nread in order gives\n%.400s", p, ranged[p], ordered[p])
				}
			}
			if fmt.Sprint(rangedDamage) != fmt.Sprint(orderedDamage) {
				t.Errorf("damage read in ranges: %v\nread in order: %v", rangedDamage, orderedDamage)
			}
			switch c.name {
			case "clean", "zeros written ahead":
				if len(orderedDamage) != 0 {
					t.Errorf("damage found in the %s: %v", c.name, orderedDamage)
				}
			default:
				if len(orderedDamage) == 0 {
					t.Errorf("no damage found in the %s", c.name)
				}
			}
		})
	}
}
