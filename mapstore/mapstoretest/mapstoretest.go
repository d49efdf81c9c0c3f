package mapstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Open opens a store on dir with the given partition count.
type Open func(t *testing.T, dir string, partitions int) mapstore.MapStore

const parts = 16

type harness struct {
	t    *testing.T
	open Open
	dir  string
	s    mapstore.MapStore
	seq  map[int]uint64
}

func (h *harness) reopen() {
	h.t.Helper()
	if h.s != nil {
		if err := h.s.Close(); err != nil {
			h.t.Fatal(err)
		}
	}
	h.s = h.open(h.t, h.dir, parts)
}

func (h *harness) rec(key, val string) mapstore.Record {
	p := partition.Of([]byte(key), parts)
	h.seq[p]++
	return mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: h.seq[p]}, Key: []byte(key), Value: []byte(val)}
}

func (h *harness) all() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for p := 0; p < parts; p++ {
		err := h.s.LoadPartition(context.Background(), p, func(r mapstore.Record) error {
			if partition.Of(r.Key, parts) != p {
				h.t.Errorf("key %q loaded in partition %d", r.Key, p)
			}
			out[string(r.Key)] = string(r.Value)
			return nil
		})
		if err != nil {
			h.t.Fatal(err)
		}
	}
	return out
}

// Run runs the suite.
func Run(t *testing.T, open Open) {
	ctx := context.Background()
	tests := map[string]func(h *harness){
		"StoreLoad": func(h *harness) {
			must(h.t, h.s.Store(ctx, h.rec("a", "1")))
			r, ok, err := h.s.Load(ctx, []byte("a"))
			if err != nil || !ok || string(r.Value) != "1" {
				h.t.Fatalf("Load a = %q, %v, %v", r.Value, ok, err)
			}
			if _, ok, _ := h.s.Load(ctx, []byte("none")); ok {
				h.t.Fatal("Load of a missing key found one")
			}
		},
		"StoreAllDeleteAll": func(h *harness) {
			var rs []mapstore.Record
			for i := 0; i < 50; i++ {
				rs = append(rs, h.rec(fmt.Sprint("k", i), fmt.Sprint("v", i)))
			}
			must(h.t, h.s.StoreAll(ctx, rs))
			var del []mapstore.Record
			for i := 0; i < 50; i += 2 {
				del = append(del, h.rec(fmt.Sprint("k", i), ""))
			}
			must(h.t, h.s.DeleteAll(ctx, del))
			got, err := h.s.LoadAll(ctx, [][]byte{[]byte("k0"), []byte("k1"), []byte("k3"), []byte("zz")})
			must(h.t, err)
			sort.Slice(got, func(i, j int) bool { return bytes.Compare(got[i].Key, got[j].Key) < 0 })
			if len(got) != 2 || string(got[0].Key) != "k1" || string(got[1].Value) != "v3" {
				h.t.Fatalf("LoadAll = %v", got)
			}
			keys, err := h.s.LoadAllKeys(ctx)
			if err != nil || len(keys) != 25 {
				h.t.Fatalf("LoadAllKeys = %d keys, %v; want 25", len(keys), err)
			}
		},
		"OverwriteAndDeleteSurviveRestart": func(h *harness) {
			must(h.t, h.s.Store(ctx, h.rec("x", "old")))
			newer := h.rec("x", "new")
			must(h.t, h.s.Store(ctx, newer))
			must(h.t, h.s.Store(ctx, h.rec("gone", "1")))
			must(h.t, h.s.Delete(ctx, h.rec("gone", "")))
			h.reopen()
			got := h.all()
			if got["x"] != "new" || len(got) != 1 {
				h.t.Fatalf("after restart: %v", got)
			}
			r, _, _ := h.s.Load(ctx, []byte("x"))
			if r.Version != newer.Version {
				h.t.Fatalf("x has version %+v after restart, want %+v", r.Version, newer.Version)
			}
		},
		"VersionSurvivesRestart": func(h *harness) {
			r := h.rec("v", "1")
			r.Version = mapstore.Version{Epoch: 7, Seq: 1234}
			must(h.t, h.s.Store(ctx, r))
			h.reopen()
			got, ok, err := h.s.Load(ctx, []byte("v"))
			if err != nil || !ok || got.Version != r.Version {
				h.t.Fatalf("version = %+v, %v, %v; want %+v", got.Version, ok, err, r.Version)
			}
		},
		"BinaryKeysEmptyAndLargeValues": func(h *harness) {
			big := bytes.Repeat([]byte{0xAB}, 1<<20)
			must(h.t, h.s.Store(ctx, h.rec("\x00\xff\x00", "")))
			r := h.rec("big", "")
			r.Value = big
			must(h.t, h.s.Store(ctx, r))
			h.reopen()
			got := h.all()
			if v, ok := got["\x00\xff\x00"]; !ok || v != "" {
				h.t.Fatalf("binary key: %q, %v", v, ok)
			}
			if got["big"] != string(big) {
				h.t.Fatalf("1 MiB value: %d bytes back", len(got["big"]))
			}
		},
		"ManyKeysConcurrent": func(h *harness) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for g := 0; g < 32; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						mu.Lock()
						r := h.rec(fmt.Sprintf("g%d-%d", g, i), "v")
						mu.Unlock()
						if err := h.s.Store(ctx, r); err != nil {
							h.t.Error(err)
							return
						}
					}
				}(g)
			}
			wg.Wait()
			h.reopen()
			if n := len(h.all()); n != 3200 {
				h.t.Fatalf("after restart %d keys, want 3200", n)
			}
		},
		"ReturnedSlicesAreOwned": func(h *harness) {
			must(h.t, h.s.Store(ctx, h.rec("own", "value")))
			r, _, _ := h.s.Load(ctx, []byte("own"))
			r.Value[0] = 'X'
			r2, _, _ := h.s.Load(ctx, []byte("own"))
			if string(r2.Value) != "value" {
				h.t.Fatalf("mutating a returned value changed the store: %q", r2.Value)
			}
		},
		"ClosedStore": func(h *harness) {
			must(h.t, h.s.Close())
			s := h.s
			h.s = nil
			if err := s.Store(ctx, h.rec("a", "1")); !errors.Is(err, mapstore.ErrClosed) {
				h.t.Fatalf("Store after Close: %v", err)
			}
			if _, _, err := s.Load(ctx, []byte("a")); !errors.Is(err, mapstore.ErrClosed) {
				h.t.Fatalf("Load after Close: %v", err)
			}
			h.s = h.open(h.t, h.dir, parts)
		},
	}
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			h := &harness{t: t, open: open, dir: t.TempDir(), seq: map[int]uint64{}}
			h.s = open(t, h.dir, parts)
			defer func() {
				if h.s != nil {
					h.s.Close()
				}
			}()
			tests[name](h)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
