package filestore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
	"github.com/stowage/stowage/serde/record"
)

// wholeFileFS hides durable append, so that the store reads every file
// with one call, as on HDFS and object stores.
type wholeFileFS struct{ fsbackend.FS }

func (f wholeFileFS) Capabilities() fsbackend.Capabilities {
	c := f.FS.Capabilities()
	c.DurableAppend = false
	return c
}

// op is one record written by a test, by key, version and value (nil:
// a delete).
type op struct {
	key string
	seq uint64
	val []byte
}

// ReplayPartition hands over records in version order, whatever order
// the log holds them in (out of order within a file, or older versions
// in a later file), ReplayPartitionKeys gives each key's records in
// increasing versions (a write found twice once), and every loading path
// keeps per key the record of the highest version.
func TestReplayOrdersByVersion(t *testing.T) {
	v := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name string
		runs [][]op // one store run (so one log file) each
		want map[string]string
	}{
		{
			name: "in order",
			runs: [][]op{{{"a", 1, v("a1")}, {"a", 2, v("a2")}, {"b", 3, v("b3")}, {"b", 4, nil}}},
			want: map[string]string{"a": "a2"},
		},
		{
			name: "out of order within a file",
			runs: [][]op{{{"a", 2, v("a2")}, {"b", 4, nil}, {"a", 1, v("a1")}, {"b", 3, v("b3")}, {"c", 6, v("c6")}, {"c", 5, nil}}},
			want: map[string]string{"a": "a2", "c": "c6"},
		},
		{
			name: "the same write in two files",
			runs: [][]op{{{"a", 1, v("a1")}, {"b", 2, v("b2")}}, {{"a", 1, v("a1")}, {"b", 3, nil}}},
			want: map[string]string{"a": "a1"},
		},
		{
			name: "older versions in a later file",
			runs: [][]op{{{"a", 5, v("a5")}, {"b", 6, nil}}, {{"a", 3, nil}, {"b", 4, v("b4")}, {"c", 7, v("c7")}}},
			want: map[string]string{"a": "a5", "c": "c7"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			// All keys in one partition, so that their versions interleave.
			p := keyhash.Partition([]byte("a"), parts)
			key := func(name string) string {
				for i := 0; ; i++ {
					if k := fmt.Sprint(name, i); keyhash.Partition([]byte(k), parts) == p {
						return k
					}
				}
			}
			want := map[string]string{}
			for k, v := range tc.want {
				want[key(k)] = v
			}
			for _, run := range tc.runs {
				s := e.open(filestore.Options{})
				for _, o := range run {
					r := mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: o.seq}, Key: []byte(key(o.key)), Value: o.val}
					write := s.Store
					if o.val == nil {
						write = s.Delete
					}
					if err := write(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
				s.Close()
			}
			s := e.open(filestore.Options{})
			got := map[string]string{}
			var last mapstore.Version
			err := s.ReplayPartition(ctx, p, func(r mapstore.Record) error {
				if r.Version.Less(last) {
					t.Errorf("replay gave version %v after %v", r.Version, last)
				}
				last = r.Version
				if r.Deleted {
					delete(got, string(r.Key))
				} else {
					got[string(r.Key)] = string(r.Value)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			expectSame(t, got, want)

			s = e.open(filestore.Options{})
			got = map[string]string{}
			seen := map[string]mapstore.Version{}
			err = s.ReplayPartitionKeys(ctx, p, nil, func(k string, r mapstore.Record) error {
				if v, ok := seen[k]; ok && !v.Less(r.Version) {
					t.Errorf("key %s: version %v after %v", k, r.Version, v)
				}
				seen[k] = r.Version
				if r.Deleted {
					delete(got, k)
				} else {
					got[k] = string(r.Value)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			expectSame(t, got, want)

			s = e.open(filestore.Options{})
			defer s.Close()
			expectSame(t, loadAll(t, s), want)
		})
	}
}

// A log larger than the chunks the store reads on local disk, with a
// frame longer than a chunk, a damaged frame past the first chunk and a
// torn tail: whether the file is read in chunks or with one call, the
// damage reported is what record.Scanner finds in the whole file, and
// every other record loads.
func TestLargeLogDamageIsFoundInChunks(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(fmt.Sprint("whole file ", whole), func(t *testing.T) {
			e := newEnv(t)
			m := newModel(1)
			s := e.open(filestore.Options{})
			want := map[string]string{}
			ctx := context.Background()
			for i := 0; i < 3000; i++ {
				k := fmt.Sprintf("k%04d", i)
				val := strings.Repeat(string(rune('a'+i%26)), 100+(i*37)%1500)
				if i == 1500 {
					val = strings.Repeat("L", 2_500_000) // longer than a chunk
				}
				if err := s.Store(ctx, m.next(k, []byte(val), false)); err != nil {
					t.Fatal(err)
				}
				want[k] = val
			}
			s.Close()
			logs := logFiles(t, e.dir)
			if len(logs) != 1 {
				t.Fatalf("want 1 log segment, have %v", logs)
			}
			data, err := os.ReadFile(logs[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(data) < 4<<20 {
				t.Fatalf("log is %d bytes, want over 4 MiB", len(data))
			}
			i := bytes.Index(data, []byte("k2800"))
			if i < 1<<20 {
				t.Fatalf("key k2800 at offset %d, want past the first MiB", i)
			}
			data[i+20] ^= 0xFF
			data = append(data, 0xF7, 0x5A, 1, 'P', 100, 0, 0, 0, 1, 2, 3)
			if err := os.WriteFile(logs[0], data, 0o644); err != nil {
				t.Fatal(err)
			}
			delete(want, "k2800")
			sc := record.NewScanner(data)
			for sc.Next() {
			}
			wantDamage := sc.Damages()
			if len(wantDamage) != 2 || !wantDamage[1].Tail {
				t.Fatalf("the scanner finds %v, want a damaged frame and a torn tail", wantDamage)
			}

			if whole {
				e.fs = wholeFileFS{e.fs}
			}
			s = e.open(filestore.Options{})
			defer s.Close()
			expectSame(t, loadAll(t, s), want)
			if len(e.damages) != len(wantDamage) {
				t.Fatalf("damage reported: %v, want %v", e.damages, wantDamage)
			}
			for j, d := range e.damages {
				w := wantDamage[j]
				if d.Offset != w.Offset || d.Length != w.Length || d.Tail != w.Tail {
					t.Errorf("damage %d: offset %d, length %d, tail %v; want %d, %d, %v", j, d.Offset, d.Length, d.Tail, w.Offset, w.Length, w.Tail)
				}
			}
		})
	}
}
