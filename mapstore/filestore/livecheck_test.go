package filestore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/mapstore"
)

// TestNewKeysAreNotSnapshottedWhileWritten: a map written with new keys
// only has a log that is all live; once the log is over its budget (4
// MiB with no snapshot yet) a compaction asks the snapshot source what is
// live and writes no snapshot, since it would free nothing. Overwriting
// the same keys then makes the log dead, and the next compactions
// snapshot and collect it, so that the disk comes back within twice the
// live bytes.
// Both with the snapshot source and with LiveSizes counting.
func TestNewKeysAreNotSnapshottedWhileWritten(t *testing.T) {
	t.Run("source", func(t *testing.T) { newKeysNotSnapshotted(t, false) })
	t.Run("sizes", func(t *testing.T) { newKeysNotSnapshotted(t, true) })
}

func newKeysNotSnapshotted(t *testing.T, sizes bool) {
	ctx := context.Background()
	dir := t.TempDir()
	s, m, _ := openSmallMap(t, dir)
	defer s.Close()
	var calls atomic.Int64 // of the snapshot source
	s.SetSnapshotSource(func(ctx context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
		calls.Add(1)
		return m.source(ctx, p)
	})
	if sizes {
		s.SetLiveSizes(func(_ context.Context, p int, fn func(int, int, mapstore.Version, int64)) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, r := range m.live[p] {
				fn(len(r.Key), len(r.Value), r.Version, r.Expires)
			}
			return nil
		})
	}
	const keys, batch = 24_000, 200 // about 6.5 MiB of 256 B values: over the budget, under 64 KiB a partition
	var gap time.Duration           // the longest pause between two writes
	write := func(round int) {
		last := time.Now()
		for i := 0; i < keys; i += batch {
			gap = max(gap, time.Since(last))
			if err := s.Admit(ctx); err != nil {
				t.Fatal(err)
			}
			var rs []mapstore.Record
			for k := i; k < min(i+batch, keys); k++ {
				key := fmt.Sprintf("key-%06d", k)
				v := fmt.Sprintf("%s-round-%d-", key, round)
				rs = append(rs, m.begin(key, []byte(v+strings.Repeat("v", 256-len(v)))))
			}
			if err := s.StoreAll(ctx, rs); err != nil {
				t.Fatal(err)
			}
			m.done(rs)
			last = time.Now()
		}
	}
	write(0)
	if gap > 800*time.Millisecond {
		// Nothing written for a second makes the map idle, and an idle
		// map is snapshotted once whatever its log holds.
		t.Skipf("the writes paused for %v: the store may have counted as idle", gap)
	}
	// Right after the last write, so that the store does not count as
	// idle (which snapshots an all-live log once, to load faster).
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(snapFiles(t, dir)); n != 0 {
		t.Errorf("%d snapshot files after writing %d new keys (%d live bytes, %d on disk): the log was all live", n, keys, m.liveBytes(), dirSize(dir))
	}
	// The live check asked LiveSizes when it had it, else the source.
	if n := calls.Load(); sizes != (n == 0) {
		t.Errorf("the snapshot source was asked %d times with LiveSizes %v", n, sizes)
	}
	write(1)
	write(2)
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(snapFiles(t, dir)); n == 0 {
		t.Errorf("no snapshot after overwriting every key twice (%d live bytes, %d on disk)", m.liveBytes(), dirSize(dir))
	}
	if disk, live := dirSize(dir), m.liveBytes(); disk > 2*live+16<<20 {
		t.Errorf("%d bytes on disk for %d live", disk, live)
	}
}
