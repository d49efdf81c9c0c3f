package filestore_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// flightModel plays the in-memory map as the map store sees it: writes
// are versioned per partition, and a snapshot covers the versions below
// the oldest write still in flight (versioned, not yet acknowledged).
type flightModel struct {
	mu       sync.Mutex
	ver      []mapstore.Version
	live     []map[string]mapstore.Record
	inflight []map[uint64]bool
	bytes    int64 // keys and values of live
}

func newFlightModel(parts int) *flightModel {
	m := &flightModel{ver: make([]mapstore.Version, parts), live: make([]map[string]mapstore.Record, parts), inflight: make([]map[uint64]bool, parts)}
	for p := range m.live {
		m.live[p], m.inflight[p] = map[string]mapstore.Record{}, map[uint64]bool{}
		m.ver[p].Epoch = 1
	}
	return m
}

// begin versions a write of key and marks it in flight.
func (m *flightModel) begin(key string, val []byte) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := keyhash.Partition([]byte(key), len(m.live))
	m.ver[p].Seq++
	r := mapstore.Record{Partition: p, Version: m.ver[p], Key: []byte(key), Value: val}
	if old, ok := m.live[p][key]; ok {
		m.bytes -= int64(len(old.Key) + len(old.Value))
	}
	m.bytes += int64(len(r.Key) + len(r.Value))
	m.live[p][key] = r
	m.inflight[p][r.Version.Seq] = true
	return r
}

// liveBytes is the keys and values of the live entries.
func (m *flightModel) liveBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// done marks writes acknowledged.
func (m *flightModel) done(rs []mapstore.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		delete(m.inflight[r.Partition], r.Version.Seq)
	}
}

func (m *flightModel) source(_ context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]mapstore.Record, 0, len(m.live[p]))
	for _, r := range m.live[p] {
		out = append(out, r)
	}
	upto := m.ver[p]
	for seq := range m.inflight[p] {
		if seq <= upto.Seq {
			upto.Seq = seq - 1
		}
	}
	return out, upto, nil
}

func (m *flightModel) contents() (map[string]string, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	var live int64
	for _, l := range m.live {
		for k, r := range l {
			out[k] = string(r.Value)
			live += int64(len(k) + len(r.Value))
		}
	}
	return out, live
}

// dirSize is the sum of the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // a file compaction removed meanwhile
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// smallMapWorkload overwrites the same keys of a small map round after
// round: writers goroutines, each with its share of the keys, write
// batches of batch entries through Admit and StoreAll, as the map does.
type smallMapWorkload struct {
	name                string
	keys, rounds, value int
	writers, batch      int
}

// smallMapWorkloads are a metrics-style map (50 keys of 2 KB, 20,000
// writes) and 10 overwrites of 20,000 keys of 256 B.
var smallMapWorkloads = []smallMapWorkload{
	{name: "metrics", keys: 50, rounds: 400, value: 2000, writers: 5, batch: 10},
	{name: "overwrite", keys: 20_000, rounds: 10, value: 256, writers: 32, batch: 50},
}

// run writes the workload to s, with m as the map, sampling the bytes
// under dir every 2 ms meanwhile. It returns the sample furthest above
// the live bytes of its moment: the bytes on disk and the live bytes
// then. Errors of the writes are reported to tb.
func (w smallMapWorkload) run(tb testing.TB, s *filestore.Store, m *flightModel, dir string) (peak, peakLive int64) {
	ctx := context.Background()
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			live := m.liveBytes()
			if d := dirSize(dir); d-live > peak-peakLive {
				peak, peakLive = d, live
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < w.writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var mine []string
			for k := g; k < w.keys; k += w.writers {
				mine = append(mine, fmt.Sprintf("key-%05d", k))
			}
			for r := 0; r < w.rounds; r++ {
				for i := 0; i < len(mine); i += w.batch {
					if err := s.Admit(ctx); err != nil {
						tb.Error(err)
						return
					}
					var rs []mapstore.Record
					for _, k := range mine[i:min(i+w.batch, len(mine))] {
						v := fmt.Sprintf("%s-round-%d-", k, r)
						v += strings.Repeat("v", w.value-len(v))
						rs = append(rs, m.begin(k, []byte(v)))
					}
					if err := s.StoreAll(ctx, rs); err != nil {
						tb.Error(err)
						return
					}
					m.done(rs)
				}
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	<-sampled
	return peak, peakLive
}

// settle samples the bytes under dir every 50 ms for up to window after
// writes stopped, until they are within twice live unless full is set.
// It returns the last sample and how long after the start the disk was
// first within max(2x live, live + 4 MiB) and first within 2x live (0:
// not within the window).
func settle(dir string, live int64, window time.Duration, full bool) (disk int64, inBound, inTwice time.Duration) {
	bound := max(2*live, live+4<<20)
	idle := time.Now()
	for time.Since(idle) < window {
		disk = dirSize(dir)
		if inBound == 0 && disk <= bound {
			inBound = max(time.Since(idle), time.Nanosecond)
		}
		if inTwice == 0 && disk <= 2*live {
			inTwice = max(time.Since(idle), time.Nanosecond)
			if !full {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return disk, inBound, inTwice
}

// openSmallMap opens a store with the default settings on local disk in
// dir, with a fresh model as its snapshot source, owning every partition.
func openSmallMap(tb testing.TB, dir string) (*filestore.Store, *flightModel, fsbackend.FS) {
	f, err := local.New(dir)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := filestore.Open(context.Background(), filestore.Options{FS: f})
	if err != nil {
		tb.Fatal(err)
	}
	m := newFlightModel(s.Partitions())
	s.SetSnapshotSource(m.source)
	for p := 0; p < s.Partitions(); p++ { // the store owns what it loaded
		err := s.LoadPartition(context.Background(), p, func(r mapstore.Record) error {
			return fmt.Errorf("a new map loaded key %q", r.Key)
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return s, m, f
}

// TestSmallMapDiskStaysBounded: at the default settings (64 MiB segments,
// 271 partitions), a small map that is overwritten over and over keeps
// within its live bytes plus 16 MiB on disk while it is written, and
// within max(2x live, live + 4 MiB), and then within twice its live
// bytes, once it was idle for a few seconds: the segment being written
// does not keep its dead records. Both smallMapWorkloads. Afterwards a
// fresh store loads every key's last value.
func TestSmallMapDiskStaysBounded(t *testing.T) {
	for _, tc := range smallMapWorkloads {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, m, f := openSmallMap(t, dir)
			defer s.Close()
			start := time.Now()
			peak, peakLive := tc.run(t, s, m, dir)
			wrote := time.Since(start)
			if t.Failed() {
				t.FailNow()
			}
			want, live := m.contents()
			if peak > peakLive+16<<20 {
				t.Errorf("%d bytes on disk while writing, for %d live bytes: over live + 16 MiB", peak, peakLive)
			}

			// Idle: first within the bound, then within twice the live
			// bytes (an idle map's log is brought within half its live
			// bytes or 64 KiB, whichever is more).
			const window = 8 * time.Second
			disk, inBound, inTwice := settle(dir, live, window, false)
			t.Logf("%d writes in %v; at worst %d bytes on disk for %d live while writing; %d bytes for %d live (%.2fx) once idle; within max(2x live, live + 4 MiB) after %v, within 2x live after %v (0: never)",
				tc.keys*tc.rounds, wrote.Round(time.Millisecond), peak, peakLive, disk, live, float64(disk)/float64(live), inBound.Round(time.Millisecond), inTwice.Round(time.Millisecond))
			if inBound == 0 {
				t.Errorf("%d bytes on disk for %d live bytes after %v idle: over max(2x live, live + 4 MiB) = %d",
					disk, live, window, max(2*live, live+4<<20))
			}
			if inTwice == 0 {
				t.Errorf("%d bytes on disk for %d live bytes after %v idle: over twice the live bytes", disk, live, window)
			}

			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := filestore.Open(context.Background(), filestore.Options{FS: f})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			expectSame(t, loadAll(t, s2), want)
		})
	}
}

// TestIdleMapKeepsNoLog: a small map (100 KB live) written with more
// than its idle budget of log (64 KiB) but less than its budget while
// written (4 MiB), all of it in the segment still open, is left idle:
// within a few seconds the open segment is finished and deleted once its
// partitions are snapshotted, so only snapshots are left; on a back end
// without append (one file per batch), the batch files go the same way.
// Both with 3 MB of log and with 600 KB, which a per-map floor of 2 MiB
// on the idle budget would leave. After a crash right then, every key
// loads with its last value.
func TestIdleMapKeepsNoLog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		append bool
		writes int
	}{{"append/3MB", true, 1500}, {"file-per-batch/3MB", false, 1500}, {"append/600KB", true, 300}, {"file-per-batch/600KB", false, 300}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memfs.New()
			var f fsbackend.FS = mem
			if !tc.append {
				f = wholeFileFS{mem}
			}
			s, err := filestore.Open(ctx, filestore.Options{FS: f})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			m := newFlightModel(s.Partitions())
			s.SetSnapshotSource(m.source)
			loadAll(t, s)
			const keys, size = 50, 2000 // 100 KB live
			for i := 0; i < tc.writes; i += 10 {
				var rs []mapstore.Record
				for j := i; j < i+10; j++ {
					k := fmt.Sprintf("metric-%02d", j%keys)
					v := fmt.Sprintf("%s-%d-", k, j)
					rs = append(rs, m.begin(k, []byte(v+strings.Repeat("m", size-len(v)))))
				}
				if err := s.StoreAll(ctx, rs); err != nil {
					t.Fatal(err)
				}
				m.done(rs)
			}
			logBytes := func() int64 {
				var n int64
				for _, fi := range logNames(t, mem) {
					n += fi.Size
				}
				return n
			}
			if n := logBytes(); n < 512<<10 {
				t.Fatalf("%d bytes of log after the writes, want over 512 KiB: the test writes too little", n)
			}
			idle := time.Now()
			for logBytes() > 0 && time.Since(idle) < 8*time.Second {
				time.Sleep(20 * time.Millisecond)
			}
			want, live := m.contents()
			disk := diskBytes(t, mem)
			t.Logf("after %v idle: %d bytes of log, %d on disk for %d live", time.Since(idle).Round(time.Millisecond), logBytes(), disk, live)
			if n := logBytes(); n > 0 {
				t.Fatalf("%d bytes of log in %d files left after %v idle", n, len(logNames(t, mem)), time.Since(idle).Round(time.Millisecond))
			}
			if disk > live+live/4+4096 {
				t.Errorf("%d bytes on disk for %d live bytes with no log left: more than the snapshots should take", disk, live)
			}
			mem.Crash()
			s2, err := filestore.Open(ctx, filestore.Options{FS: f})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			expectSame(t, loadAll(t, s2), want)
		})
	}
}

// remove versions a delete of key and marks it in flight.
func (m *flightModel) remove(key string) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := keyhash.Partition([]byte(key), len(m.live))
	m.ver[p].Seq++
	if old, ok := m.live[p][key]; ok {
		m.bytes -= int64(len(old.Key) + len(old.Value))
		delete(m.live[p], key)
	}
	r := mapstore.Record{Partition: p, Version: m.ver[p], Key: []byte(key), Deleted: true}
	m.inflight[p][r.Version.Seq] = true
	return r
}

// TestIdleMapDropsDeletedEntries: once most entries of a snapshotted map
// are deleted (as expiry does), an idle map is snapshotted again, so the
// deleted entries leave the disk, although the deletes take far less log
// (50 KB) than the idle budget of the live bytes the snapshots were taken
// with (200 KB).
// After a crash right then, the entries left load with their values.
func TestIdleMapDropsDeletedEntries(t *testing.T) {
	ctx := context.Background()
	mem := memfs.New()
	s, err := filestore.Open(ctx, filestore.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newFlightModel(s.Partitions())
	s.SetSnapshotSource(m.source)
	loadAll(t, s)
	const keys, kept = 2000, 10
	val := strings.Repeat("v", 200)
	for i := 0; i < keys; i += 100 {
		var rs []mapstore.Record
		for k := i; k < i+100; k++ {
			rs = append(rs, m.begin(fmt.Sprintf("job-%05d", k), []byte(val)))
		}
		if err := s.StoreAll(ctx, rs); err != nil {
			t.Fatal(err)
		}
		m.done(rs)
	}
	logBytes := func() int64 {
		var n int64
		for _, fi := range logNames(t, mem) {
			n += fi.Size
		}
		return n
	}
	// Idle: the log of the writes goes, into snapshots.
	for start := time.Now(); logBytes() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 8*time.Second {
			t.Fatalf("%d bytes of log left after %v idle", logBytes(), time.Since(start).Round(time.Millisecond))
		}
	}
	for k := kept; k < keys; k++ {
		r := m.remove(fmt.Sprintf("job-%05d", k))
		if err := s.Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
		m.done([]mapstore.Record{r})
	}
	before, deletes := diskBytes(t, mem), logBytes()
	if deletes > keys*200/2 {
		t.Fatalf("%d bytes of log after the deletes: not under half the %d live bytes snapshotted, the test does not test what it says", deletes, keys*200)
	}
	// Left: the deletes' log (under 64 KiB, in the segment still open)
	// and the snapshots of what is live, a header and an end frame each.
	want, live := m.contents()
	bound := deletes + 32<<10
	idle := time.Now()
	disk := before
	for disk > bound && time.Since(idle) < 8*time.Second {
		time.Sleep(20 * time.Millisecond)
		disk = diskBytes(t, mem)
	}
	t.Logf("%d bytes on disk (%d of log) after the deletes, %d after %v idle, for %d live", before, deletes, disk, time.Since(idle).Round(time.Millisecond), live)
	if disk > bound {
		t.Errorf("%d bytes on disk after %v idle, for %d live bytes (%d before idle): the deleted entries stay in the snapshots", disk, time.Since(idle).Round(time.Millisecond), live, before)
	}
	mem.Crash()
	s2, err := filestore.Open(ctx, filestore.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
}
