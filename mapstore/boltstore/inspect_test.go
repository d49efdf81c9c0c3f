package boltstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
)

// TestOpenReadOnly: a map opened read-only reads what was stored, with the
// stored partition count, changes nothing in the file, refuses writes,
// and waits for no member: a file held for writing gives ErrLocked.
func TestOpenReadOnly(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	if _, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "m"}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReadOnly of a missing file: %v, want ErrNotExist", err)
	}
	const parts = 4
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	var rs []mapstore.Record
	for i := 0; i < 20; i++ {
		rs = append(rs, rec(fmt.Sprint("key-", i), "value", parts, uint64(i+1)))
	}
	if err := s.StoreAll(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// While the map is open for writing, a reader gives up with ErrLocked.
	if _, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "m", Timeout: 50 * time.Millisecond}); !errors.Is(err, mapstore.ErrLocked) {
		t.Fatalf("OpenReadOnly of a file held for writing: %v, want ErrLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "other"}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReadOnly of a missing map: %v, want ErrNotExist", err)
	}
	ro, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "m", Partitions: 271})
	if err != nil {
		t.Fatal(err)
	}
	// A second reader at the same time is fine (shared lock).
	ro2, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "m", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if err := ro2.Close(); err != nil {
		t.Fatal(err)
	}
	if ro.Partitions() != parts {
		t.Fatalf("Partitions() = %d, want the stored %d (no re-hash)", ro.Partitions(), parts)
	}
	st, err := ro.Stats(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != int64(len(rs)) || st.LiveBytes != int64(len(rs))*int64(len("key-1")+len("value"))+10 || st.FileBytes != int64(len(before)) || st.Damaged != 0 {
		t.Fatalf("Stats = %+v for %d entries in a %d-byte file", st, len(rs), len(before))
	}
	if r, ok, err := ro.Load(ctx, []byte("key-3")); err != nil || !ok || string(r.Value) != "value" {
		t.Fatalf("Load = %+v, %v, %v", r, ok, err)
	}
	if err := ro.Store(ctx, rec("new", "v", parts, 100)); err == nil {
		t.Fatal("Store on a read-only map succeeded")
	}
	if ds, err := ro.Verify(ctx, nil); err != nil || len(ds) != 0 {
		t.Fatalf("Verify of a sound file = %v, %v", ds, err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("reading the map read-only changed the file")
	}
	// The file is usable for writing again once the reader closed.
	s = open(t, path, boltstore.Options{MapName: "m", Partitions: parts, Timeout: 50 * time.Millisecond})
	s.Close()
}

// TestVerifyFindsDamage: a value that does not decode and a key in a
// partition it does not hash to are reported, each naming its key; Stats
// counts the undecodable entry as damaged, not as an entry.
func TestVerifyFindsDamage(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	const parts = 4
	rs := storeMap(t, path, parts, 20)
	bad, moved := rs[3], rs[5]
	updateFile(t, path, func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("m"))
		if err := m.Bucket([]byte{0, 0, 0, byte(bad.Partition)}).Put(bad.Key, []byte{0xEE}); err != nil {
			return err
		}
		from := m.Bucket([]byte{0, 0, 0, byte(moved.Partition)})
		v := bytes.Clone(from.Get(moved.Key))
		if err := from.Delete(moved.Key); err != nil {
			return err
		}
		return m.Bucket([]byte{0, 0, 0, byte((moved.Partition + 1) % parts)}).Put(moved.Key, v)
	})
	ro, err := boltstore.OpenReadOnly(path, boltstore.Options{MapName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	calls := 0
	ds, err := ro.Verify(ctx, func(done, total int) {
		calls++
		if total != parts || done > total {
			t.Errorf("progress %d of %d, want of %d partitions", done, total, parts)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || calls != parts+1 {
		t.Fatalf("Verify found %v (%d progress calls), want the damaged and the misplaced entry", ds, calls)
	}
	text := ds[0].String() + "\n" + ds[1].String()
	for _, k := range [][]byte{bad.Key, moved.Key} {
		if !strings.Contains(text, string(k)) {
			t.Errorf("damage report %q does not name key %q", text, k)
		}
	}
	st, err := ro.Stats(ctx, nil)
	if err != nil || st.Damaged != 1 || st.Entries != int64(len(rs)-1) {
		t.Fatalf("Stats = %+v, %v; want %d entries and 1 damaged", st, err, len(rs)-1)
	}
}
