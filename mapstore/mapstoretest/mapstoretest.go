package mapstoretest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
)

// Open opens the store under test on dir with the given partition count,
// failing t if it cannot. It may be called several times on one dir; the
// suite closes the previous store first.
type Open = func(t *testing.T, dir string, partitions int) mapstore.MapStore

// parts is the partition count of most subtests: small enough that every
// partition holds several keys, so LoadPartition's filtering is exercised.
const parts = 16

// Options adjust the suite to the store under test. The zero value runs
// the full suite.
type Options struct {
	// Small runs the bulk cases with about a tenth of their records:
	// ManyKeysAllPartitions stores 2,000 keys in batches of 500 instead of
	// 20,000 in batches of 2,000 (still over every one of
	// keyhash.DefaultPartitions partitions), and ConcurrentStore runs 8
	// writers of 12 records instead of 32 of 24.
	// Every case and every check still runs. It is meant for back ends
	// where each call is a network round trip, such as object stores on
	// test servers under the race detector; local disk runs the full size.
	Small bool
}

// Run runs the contract suite against the stores open returns, one
// subtest per property (see the package doc).
func Run(t *testing.T, open func(t *testing.T, dir string, partitions int) mapstore.MapStore) {
	RunWith(t, open, Options{})
}

// RunWith is Run with options.
func RunWith(t *testing.T, open func(t *testing.T, dir string, partitions int) mapstore.MapStore, opts Options) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.parts
			if n == 0 {
				n = parts
			}
			h := &harness{t: t, ctx: t.Context(), open: open, dir: t.TempDir(), parts: n, small: opts.Small,
				seq: map[int]uint64{}, model: map[string]mapstore.Record{}}
			h.s = open(t, h.dir, n)
			defer func() {
				if h.s != nil {
					if err := h.s.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
			}()
			c.run(h)
		})
	}
}

// harness holds the store under test and the model of what it must hold.
type harness struct {
	t     *testing.T
	ctx   context.Context
	open  Open
	dir   string
	parts int
	small bool // Options.Small
	s     mapstore.MapStore

	mu    sync.Mutex                 // guards seq and model for concurrent writers
	seq   map[int]uint64             // last Seq given per partition
	model map[string]mapstore.Record // live entries the store must hold
}

// reopen closes the store and opens it again on the same directory.
func (h *harness) reopen() {
	h.t.Helper()
	if h.s != nil {
		s := h.s
		h.s = nil
		if err := s.Close(); err != nil {
			h.t.Fatalf("Close before reopen: %v", err)
		}
	}
	h.s = h.open(h.t, h.dir, h.parts)
}

// rec returns a fresh record of key with the partition's next version.
// The record's slices are its own, so the store may keep them.
func (h *harness) rec(key, value []byte) mapstore.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := keyhash.Partition(key, h.parts)
	h.seq[p]++
	return mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: h.seq[p]},
		Key: bytes.Clone(key), Value: clone(value)}
}

// recs returns one fresh record per key, all with value.
func (h *harness) recs(keys [][]byte, value []byte) []mapstore.Record {
	out := make([]mapstore.Record, len(keys))
	for i, k := range keys {
		out[i] = h.rec(k, value)
	}
	return out
}

// bump makes the partition's next versions follow v (for tests that pick
// versions themselves).
func (h *harness) bump(p int, v mapstore.Version) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seq[p] < v.Seq {
		h.seq[p] = v.Seq
	}
}

// copies returns deep copies of rs, taken before the store owns them.
func copies(rs []mapstore.Record) []mapstore.Record {
	out := make([]mapstore.Record, len(rs))
	for i, r := range rs {
		out[i] = r
		out[i].Key, out[i].Value = bytes.Clone(r.Key), clone(r.Value)
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// applied records in the model that rs (copies) are now durable.
func (h *harness) applied(rs []mapstore.Record, deleted bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range rs {
		if deleted {
			delete(h.model, string(r.Key))
		} else {
			h.model[string(r.Key)] = r
		}
	}
}

// store calls Store for each record and updates the model.
func (h *harness) store(rs ...mapstore.Record) {
	h.t.Helper()
	for _, r := range rs {
		c := copies([]mapstore.Record{r})
		if err := h.s.Store(h.ctx, r); err != nil {
			h.t.Fatalf("Store %q: %v", r.Key, err)
		}
		h.applied(c, false)
	}
}

// storeAll calls StoreAll with rs and updates the model.
func (h *harness) storeAll(rs []mapstore.Record) {
	h.t.Helper()
	c := copies(rs)
	if err := h.s.StoreAll(h.ctx, rs); err != nil {
		h.t.Fatalf("StoreAll of %d records: %v", len(rs), err)
	}
	h.applied(c, false)
}

// del calls Delete for each record and updates the model.
func (h *harness) del(rs ...mapstore.Record) {
	h.t.Helper()
	for _, r := range rs {
		c := copies([]mapstore.Record{r})
		if err := h.s.Delete(h.ctx, r); err != nil {
			h.t.Fatalf("Delete %q: %v", r.Key, err)
		}
		h.applied(c, true)
	}
}

// delAll calls DeleteAll with rs and updates the model.
func (h *harness) delAll(rs []mapstore.Record) {
	h.t.Helper()
	c := copies(rs)
	if err := h.s.DeleteAll(h.ctx, rs); err != nil {
		h.t.Fatalf("DeleteAll of %d records: %v", len(rs), err)
	}
	h.applied(c, true)
}

// same reports how got differs from the model's want, or "".
func same(want, got mapstore.Record) string {
	switch {
	case !bytes.Equal(got.Key, want.Key):
		return fmt.Sprintf("key %q, want %q", got.Key, want.Key)
	case got.Deleted:
		return "Deleted is set on a live entry"
	case got.Partition != want.Partition:
		return fmt.Sprintf("partition %d, want %d", got.Partition, want.Partition)
	case got.Version != want.Version:
		return fmt.Sprintf("version %+v, want %+v", got.Version, want.Version)
	case !bytes.Equal(got.Value, want.Value):
		return fmt.Sprintf("value of %d bytes %s, want %d bytes %s", len(got.Value), short(got.Value), len(want.Value), short(want.Value))
	}
	return ""
}

func short(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("%q...", b[:16])
	}
	return fmt.Sprintf("%q", b)
}

// load checks Load of key against the model.
func (h *harness) load(key []byte) {
	h.t.Helper()
	want, live := h.model[string(key)]
	got, ok, err := h.s.Load(h.ctx, key)
	switch {
	case err != nil:
		h.t.Fatalf("Load %q: %v", key, err)
	case ok != live:
		h.t.Fatalf("Load %q: ok = %v, want %v", key, ok, live)
	case ok:
		if d := same(want, got); d != "" {
			h.t.Fatalf("Load %q: %s", key, d)
		}
	}
}

// partitionRecords returns what LoadPartition yields for every partition,
// keeping the returned records as they are (not copied).
func (h *harness) partitionRecords() map[int][]mapstore.Record {
	h.t.Helper()
	out := map[int][]mapstore.Record{}
	for p := 0; p < h.parts; p++ {
		err := h.s.LoadPartition(h.ctx, p, func(r mapstore.Record) error {
			out[p] = append(out[p], r)
			return nil
		})
		if err != nil {
			h.t.Fatalf("LoadPartition %d: %v", p, err)
		}
	}
	return out
}

// verify checks every read method against the model: LoadPartition of
// every partition yields exactly its live entries, LoadAllKeys exactly
// the live keys, LoadAll the live entries among the live keys and absent
// keys, and Load a sample of keys.
func (h *harness) verify() {
	h.t.Helper()
	byPart := h.partitionRecords()
	seen := map[string]bool{}
	for p, rs := range byPart {
		for _, r := range rs {
			k := string(r.Key)
			want, ok := h.model[k]
			switch {
			case !ok:
				h.t.Fatalf("LoadPartition %d yields %q, which is not live", p, r.Key)
			case seen[k]:
				h.t.Fatalf("LoadPartition yields %q twice", r.Key)
			case want.Partition != p:
				h.t.Fatalf("LoadPartition %d yields %q of partition %d", p, r.Key, want.Partition)
			}
			if d := same(want, r); d != "" {
				h.t.Fatalf("LoadPartition %d, key %q: %s", p, r.Key, d)
			}
			seen[k] = true
		}
	}
	if len(seen) != len(h.model) {
		h.t.Fatalf("LoadPartition over all partitions yields %d entries, want %d (missing e.g. %q)", len(seen), len(h.model), h.missing(seen))
	}

	keys, err := h.s.LoadAllKeys(h.ctx)
	if err != nil {
		h.t.Fatalf("LoadAllKeys: %v", err)
	}
	got := map[string]bool{}
	for _, k := range keys {
		if _, ok := h.model[string(k)]; !ok || got[string(k)] {
			h.t.Fatalf("LoadAllKeys returns %q (live %v, twice %v)", k, ok, got[string(k)])
		}
		got[string(k)] = true
	}
	if len(got) != len(h.model) {
		h.t.Fatalf("LoadAllKeys returns %d keys, want %d (missing e.g. %q)", len(got), len(h.model), h.missing(got))
	}

	ask := make([][]byte, 0, len(h.model)+3)
	for k := range h.model {
		ask = append(ask, []byte(k))
	}
	sort.Slice(ask, func(i, j int) bool { return bytes.Compare(ask[i], ask[j]) < 0 })
	absent := [][]byte{[]byte("absent-1"), []byte("absent-2"), {0xff, 0x00, 0xfe}}
	for _, k := range absent {
		if _, ok := h.model[string(k)]; !ok {
			ask = append(ask, k)
		}
	}
	rs, err := h.s.LoadAll(h.ctx, ask)
	if err != nil {
		h.t.Fatalf("LoadAll of %d keys: %v", len(ask), err)
	}
	got = map[string]bool{}
	for _, r := range rs {
		want, ok := h.model[string(r.Key)]
		if !ok || got[string(r.Key)] {
			h.t.Fatalf("LoadAll returns %q (live %v, twice %v)", r.Key, ok, got[string(r.Key)])
		}
		if d := same(want, r); d != "" {
			h.t.Fatalf("LoadAll, key %q: %s", r.Key, d)
		}
		got[string(r.Key)] = true
	}
	if len(got) != len(h.model) {
		h.t.Fatalf("LoadAll returns %d entries, want %d (missing e.g. %q)", len(got), len(h.model), h.missing(got))
	}

	// Load one key in 64 (and the absent ones): Load is a point read.
	for i, k := range ask {
		if i%64 == 0 || i >= len(ask)-len(absent) {
			h.load(k)
		}
	}
}

// missing returns one live key not in seen.
func (h *harness) missing(seen map[string]bool) string {
	for k := range h.model {
		if !seen[k] {
			return k
		}
	}
	return ""
}

// keys returns n distinct keys named prefix-i.
func keys(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}
