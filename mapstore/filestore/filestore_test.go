package filestore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

const parts = 8

// model plays the in-memory map: it versions writes and is the snapshot source.
type model struct {
	mu   sync.Mutex
	ver  []mapstore.Version
	live []map[string]mapstore.Record
}

func newModel(epoch uint64) *model {
	m := &model{ver: make([]mapstore.Version, parts), live: make([]map[string]mapstore.Record, parts)}
	for p := range m.live {
		m.live[p] = map[string]mapstore.Record{}
		m.ver[p].Epoch = epoch
	}
	return m
}

func (m *model) next(key string, val []byte, del bool) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := keyhash.Partition([]byte(key), parts)
	m.ver[p].Seq++
	r := mapstore.Record{Partition: p, Version: m.ver[p], Key: []byte(key), Value: val, Deleted: del}
	if del {
		delete(m.live[p], key)
	} else {
		m.live[p][key] = r
	}
	return r
}

func (m *model) source(ctx context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []mapstore.Record
	for _, r := range m.live[p] {
		out = append(out, r)
	}
	return out, m.ver[p], nil
}

type env struct {
	t       *testing.T
	dir     string
	fs      fsbackend.FS
	damages []filestore.Damage
	mu      sync.Mutex
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, dir: dir, fs: f}
}

func (e *env) open(opts filestore.Options) *filestore.Store {
	e.t.Helper()
	opts.FS = e.fs
	opts.Partitions = parts
	opts.OnDamage = func(d filestore.Damage) {
		e.mu.Lock()
		e.damages = append(e.damages, d)
		e.mu.Unlock()
	}
	s, err := filestore.Open(context.Background(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// loadAll loads every partition the way the map does and returns key -> value.
func loadAll(t *testing.T, s *filestore.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p := 0; p < s.Partitions(); p++ {
		err := s.LoadPartition(context.Background(), p, func(r mapstore.Record) error {
			if got := keyhash.Partition(r.Key, s.Partitions()); got != p {
				t.Errorf("key %q loaded in partition %d, hashes to %d", r.Key, p, got)
			}
			out[string(r.Key)] = string(r.Value)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func expectSame(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("loaded %d entries, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %q = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %q", k)
		}
	}
}

func TestWriteReopen(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	ctx := context.Background()
	want := map[string]string{}
	for i := 0; i < 500; i++ {
		k := fmt.Sprintf("k%03d", i%120)
		v := fmt.Sprintf("v%d", i)
		if i%7 == 3 {
			if err := s.Delete(ctx, m.next(k, nil, true)); err != nil {
				t.Fatal(err)
			}
			delete(want, k)
			continue
		}
		if err := s.Store(ctx, m.next(k, []byte(v), false)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = e.open(filestore.Options{})
	defer s.Close()
	expectSame(t, loadAll(t, s), want)
	for p := 0; p < parts; p++ {
		if s.LastVersion(p) != m.ver[p] {
			t.Errorf("partition %d: last version %+v, want %+v", p, s.LastVersion(p), m.ver[p])
		}
	}
	if len(e.damages) != 0 {
		t.Errorf("damage reported on a clean directory: %v", e.damages)
	}
}

// TestConcurrentGroupCommit: with every fdatasync made slow (syncLatency),
// writers that each wait for their record must share syncs. Each of the
// writers has at most one record in flight, so a batch carries at most
// writers records, and records/writers batches is the least possible.
// While one batch's sync runs (syncLatency, far longer than a writer takes
// to queue its next record) every other writer queues, so the next batch
// carries nearly all of them; the test allows four times the least
// (an average batch of writers/4 records). One sync per record would give
// records batches, and a sync per batch is checked too.
func TestConcurrentGroupCommit(t *testing.T) {
	const (
		writers     = 16
		perWriter   = 50
		records     = writers * perWriter
		syncLatency = 10 * time.Millisecond
		maxBatches  = 4 * records / writers
	)
	e := newEnv(t)
	slow := errorfs.Wrap(e.fs, errorfs.OnOps(errorfs.Latency(syncLatency), errorfs.OpSync))
	e.fs = slow
	var batches, got, largest int
	var mu sync.Mutex
	s := e.open(filestore.Options{OnBatch: func(n, _ int, _ time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			batches++
			got += n
			largest = max(largest, n)
		}
	}})
	m := newModel(1)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if err := s.Store(ctx, m.next(fmt.Sprintf("w%d-%d", w, i), []byte("x"), false)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	syncs := slow.Calls(errorfs.OpSync)
	s.Close()
	t.Logf("%d records in %d group-commit batches (largest %d), %d syncs", got, batches, largest, syncs)
	if got != records {
		t.Fatalf("batches carried %d records, want %d", got, records)
	}
	if batches > maxBatches {
		t.Errorf("%d records took %d batches, want at most %d (4 x records/writers): records are not grouped", records, batches, maxBatches)
	}
	if largest > writers {
		t.Errorf("a batch carried %d records, more than the %d writers had in flight", largest, writers)
	}
	if syncs != int64(batches) {
		t.Errorf("%d syncs for %d batches, want one per batch", syncs, batches)
	}
	e.fs = slow.Unwrap()
	s = e.open(filestore.Options{})
	defer s.Close()
	if got := len(loadAll(t, s)); got != records {
		t.Fatalf("loaded %d entries, want %d", got, records)
	}
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func fill(t *testing.T, s *filestore.Store, m *model, n int, prefix string) map[string]string {
	t.Helper()
	want := map[string]string{}
	for i := 0; i < n; i++ {
		k, v := fmt.Sprintf("%s%04d", prefix, i), fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", 40))
		if err := s.Store(context.Background(), m.next(k, []byte(v), false)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	return want
}

func TestTornTailIsCut(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	want := fill(t, s, m, 50, "a")
	s.Close()
	logs := logFiles(t, e.dir)
	if len(logs) != 1 {
		t.Fatalf("want 1 log segment, have %v", logs)
	}
	// A half-written record at the end, as a crash mid-batch leaves it.
	f, _ := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0xF7, 0x5A, 1, 'P', 100, 0, 0, 0, 1, 2, 3})
	f.Close()
	s = e.open(filestore.Options{})
	defer s.Close()
	expectSame(t, loadAll(t, s), want)
	if len(e.damages) != 1 || !e.damages[0].Tail {
		t.Fatalf("want one torn-tail report, got %v", e.damages)
	}
}

func TestFlippedByteInMiddleSkipsOneRecord(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	want := fill(t, s, m, 50, "b")
	s.Close()
	logs := logFiles(t, e.dir)
	data, _ := os.ReadFile(logs[0])
	// Find the record of key b0025 and flip a byte of its value.
	i := bytes.Index(data, []byte("b0025"))
	if i < 0 {
		t.Fatal("key not found in log")
	}
	data[i+10] ^= 0xFF
	os.WriteFile(logs[0], data, 0o644)
	s = e.open(filestore.Options{})
	defer s.Close()
	got := loadAll(t, s)
	delete(want, "b0025")
	expectSame(t, got, want)
	if len(e.damages) != 1 || e.damages[0].Tail || e.damages[0].File == "" {
		t.Fatalf("want one mid-file damage report naming the file, got %v", e.damages)
	}
}

func snapFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".snap") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestDamagedSnapshotFallsBack(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	opts := filestore.Options{SnapshotRetain: 2, SegmentSize: 4096}
	s := e.open(opts)
	s.SetSnapshotSource(m.source)
	loadAll(t, s) // partitions count as loaded, so they may be compacted
	ctx := context.Background()
	want := fill(t, s, m, 200, "c")
	// Force snapshots of every partition twice, with writes between.
	if err := compactAll(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fill(t, s, m, 200, "d") {
		want[k] = v
	}
	if err := compactAll(ctx, s, m); err != nil {
		t.Fatal(err)
	}
	// The log the first snapshots cover is gone: the "c" entries now live
	// only in snapshots, so loading them below proves the fallback.
	for _, lf := range logFiles(t, e.dir) {
		if data, _ := os.ReadFile(lf); bytes.Contains(data, []byte("c0000")) {
			t.Fatalf("log %s still holds the first entries; compaction removed nothing", lf)
		}
	}
	for k, v := range fill(t, s, m, 20, "e") {
		want[k] = v
	}
	s.Close()
	snaps := snapFiles(t, e.dir)
	if len(snaps) < 2 {
		t.Fatalf("want at least 2 snapshots, have %d", len(snaps))
	}
	// Damage the newest snapshot of every partition.
	byDir := map[string]string{}
	for _, sn := range snaps {
		byDir[filepath.Dir(sn)] = sn // sorted: the last is the newest
	}
	for _, sn := range byDir {
		data, _ := os.ReadFile(sn)
		data[len(data)/2] ^= 0x55
		os.WriteFile(sn, data, 0o644)
	}
	s = e.open(opts)
	defer s.Close()
	expectSame(t, loadAll(t, s), want)
	if len(e.damages) < len(byDir) {
		t.Fatalf("want a report per damaged snapshot (%d), got %v", len(byDir), e.damages)
	}
}

// compactAll makes every partition due for a snapshot and compacts.
func compactAll(ctx context.Context, s *filestore.Store, m *model) error {
	return s.ForceCompact(ctx)
}

func TestMissingMetaIsRebuilt(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	want := fill(t, s, m, 30, "m")
	s.Close()
	if err := os.Remove(filepath.Join(e.dir, "META")); err != nil {
		t.Fatal(err)
	}
	s = e.open(filestore.Options{})
	defer s.Close()
	expectSame(t, loadAll(t, s), want)
	if len(e.damages) != 1 || !strings.Contains(e.damages[0].Reason, "rebuilt") {
		t.Fatalf("want a report that META was rebuilt, got %v", e.damages)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "META")); err != nil {
		t.Fatalf("META not rewritten: %v", err)
	}
}

func TestRehashOnPartitionCountChange(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{})
	want := fill(t, s, m, 300, "r")
	s.Close()
	f := e.fs
	s2, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: 13})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
	n, _, err := filestore.ReadMeta(context.Background(), f)
	if err != nil || n != 13 {
		t.Fatalf("META partitions = %d, %v; want 13", n, err)
	}
	if len(logFiles(t, e.dir)) != 0 && strings.Contains(strings.Join(logFiles(t, e.dir), " "), "/g1/") {
		t.Fatalf("old generation left behind: %v", logFiles(t, e.dir))
	}
}

func TestEpochStartDropsUnacknowledgedOldEpochRecords(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := e.open(filestore.Options{})
	key := []byte("job")
	p := keyhash.Partition(key, parts)
	// Epoch 1 wrote seq 1..3; a new owner took over from seq 2 (seq 3 was
	// never acknowledged), started epoch 2 and wrote seq 3 itself.
	for seq, v := range []string{"a", "b", "stale"} {
		if err := s.Store(ctx, mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 1, Seq: uint64(seq + 1)}, Key: key, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	other := []byte("other")
	po := keyhash.Partition(other, parts)
	if err := s.StartEpoch(ctx, p, mapstore.Version{Epoch: 2, Seq: 2}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = e.open(filestore.Options{})
	got := loadAll(t, s)
	if got["job"] != "b" {
		t.Fatalf("job = %q, want %q (the record beyond the epoch start must be dropped)", got["job"], "b")
	}
	if err := s.Store(ctx, mapstore.Record{Partition: p, Version: mapstore.Version{Epoch: 2, Seq: 3}, Key: key, Value: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	_ = po
	s.Close()
	s = e.open(filestore.Options{})
	defer s.Close()
	if got := loadAll(t, s); got["job"] != "new" {
		t.Fatalf("job = %q, want %q", got["job"], "new")
	}
}

// Writers run against the store on a crash-simulating FS; at a random
// moment the machine "crashes" (everything not synced is dropped). Every
// acknowledged write must be there after recovery.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	for round := 0; round < 5; round++ {
		mem := memfs.New()
		m := newModel(1)
		s, err := filestore.Open(context.Background(), filestore.Options{FS: mem, Partitions: parts, SegmentSize: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		s.SetSnapshotSource(m.source)
		for p := 0; p < parts; p++ {
			s.LoadPartition(context.Background(), p, func(mapstore.Record) error { return nil })
		}
		var mu sync.Mutex
		acked := map[string]string{}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					k, v := fmt.Sprintf("w%d-k%d", w, i%30), fmt.Sprintf("v%d", i)
					if err := s.Store(context.Background(), m.next(k, []byte(v), false)); err != nil {
						return
					}
					mu.Lock()
					acked[k] = v
					mu.Unlock()
				}
			}(w)
		}
		for i := 0; i < 200*(round+1); i++ {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= 200 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		mu.Lock()
		mem.Crash() // under the lock: nothing is acknowledged meanwhile
		snapshot := map[string]string{}
		for k, v := range acked {
			snapshot[k] = v
		}
		mu.Unlock()
		close(stop)
		wg.Wait()
		s.Close()
		s2, err := filestore.Open(context.Background(), filestore.Options{FS: mem, Partitions: parts})
		if err != nil {
			t.Fatal(err)
		}
		got := loadAll(t, s2)
		s2.Close()
		for k, v := range snapshot {
			// A later write of the key may have been durable but not yet acknowledged.
			if g, ok := got[k]; !ok || (g != v && !later(g, v)) {
				t.Fatalf("round %d: key %s = %q (present %v) after crash, acknowledged %q", round, k, g, ok, v)
			}
		}
	}
}

func later(got, acked string) bool {
	var a, b int
	fmt.Sscanf(got, "v%d", &a)
	fmt.Sscanf(acked, "v%d", &b)
	return a > b
}

// ReplayPartition, applied the way the map applies it, and
// ReplayPartitionKeys, applied in turn, give exactly what LoadPartition
// gives, with snapshots, overwrites and deletes in play.
func TestReplayMatchesLoad(t *testing.T) {
	e := newEnv(t)
	m := newModel(1)
	s := e.open(filestore.Options{SegmentSize: 2048})
	s.SetSnapshotSource(m.source)
	loadAll(t, s)
	ctx := context.Background()
	for i := 0; i < 600; i++ {
		k := fmt.Sprintf("k%02d", i%50)
		if i%9 == 0 {
			s.Delete(ctx, m.next(k, nil, true))
		} else {
			s.Store(ctx, m.next(k, []byte(fmt.Sprint(i)), false))
		}
		if i == 300 {
			if err := s.ForceCompact(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	for _, mode := range []string{"replay", "keys", "load"} {
		s := e.open(filestore.Options{})
		got := map[string]mapstore.Record{}
		for p := 0; p < parts; p++ {
			var err error
			switch mode {
			case "replay":
				err = s.ReplayPartition(ctx, p, func(r mapstore.Record) error {
					cur, ok := got[string(r.Key)]
					switch {
					case ok && !cur.Version.Less(r.Version):
					case r.Deleted:
						delete(got, string(r.Key))
					default:
						got[string(r.Key)] = r
					}
					return nil
				})
			case "keys":
				// Applied in turn, as the records come, with no check.
				last := map[string]mapstore.Version{}
				sized := false
				err = s.ReplayPartitionKeys(ctx, p, func(int) { sized = true }, func(k string, r mapstore.Record) error {
					if !sized {
						t.Errorf("partition %d: a record came before the size", p)
					}
					if k != string(r.Key) {
						t.Errorf("key string %q, record key %q", k, r.Key)
					}
					if v, ok := last[k]; ok && !v.Less(r.Version) {
						t.Errorf("key %s: version %v after %v", k, r.Version, v)
					}
					last[k] = r.Version
					if r.Deleted {
						delete(got, k)
					} else {
						got[k] = r
					}
					return nil
				})
			default:
				err = s.LoadPartition(ctx, p, func(r mapstore.Record) error { got[string(r.Key)] = r; return nil })
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		for p := range m.live {
			for k, r := range m.live[p] {
				if g, ok := got[k]; !ok || string(g.Value) != string(r.Value) {
					t.Fatalf("%s: %s = %q (%v), want %q", mode, k, g.Value, ok, r.Value)
				}
				delete(got, k)
			}
		}
		if len(got) != 0 {
			t.Fatalf("%s: deleted keys came back: %v", mode, got)
		}
	}
}
