package s3_test

import (
	"context"
	"testing"

	"github.com/stowage/stowage/bench/writeamp"
	"github.com/stowage/stowage/fsbackend/s3"
)

// TestMapStoreBytesPerNewByte writes batch after batch of new records
// through the file map store onto S3 (gofakes3, counting the PUT bytes it
// stores), with compaction snapshotting and deleting as it does under a
// map, and measures the bytes uploaded per byte of new record payload in
// windows of two snapshot rounds each, the last one written after about
// twenty times as much as the first (see package writeamp for what makes
// up the figure).
//
// The bounds:
//   - the log, one new object per batch, costs at most 1.10 bytes per new
//     byte in every window: 64 records of 256 B values and ~16 B keys,
//     each framed with about 20 bytes, plus about 50 bytes of batch
//     header, is 1.065;
//   - snapshots cost at most 3.4 bytes per new byte in every window: a
//     partition of live size L is rewritten once it reached (1+r)·L with
//     r = 0.5, that is (1+r)/r = 3 bytes per new byte, plus snapshot
//     framing and the rounding of a window to whole batches; and at least
//     1.5, so compaction did run;
//   - a late window costs at most 8% more than the first one: nothing
//     grows with what was written before;
//   - the objects left hold at most twice the live payload: superseded
//     snapshots and covered log objects were deleted.
func TestMapStoreBytesPerNewByte(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	f, err := s3.Open(ctx, props(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := writeamp.Run(ctx, f, writeamp.Options{Partitions: 4, Windows: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm-up: %s", res.Warmup)
	for i, w := range res.Windows {
		t.Logf("window %d: %s", i, w)
	}
	t.Logf("all: %s; %d KiB stored for %d KiB live, in %v", res.Total, res.Stored>>10, res.Live>>10, res.Took)
	if got, want := srv.PutBytes(), res.Total.Uploaded(); got != want || f.BytesWritten() != want {
		t.Fatalf("server stored %d bytes of PUTs and the back end counted %d, the run counted %d", got, f.BytesWritten(), want)
	}
	if len(res.Windows) != 4 {
		t.Fatalf("%d windows", len(res.Windows))
	}
	first := res.Windows[0]
	for i, w := range res.Windows {
		if w.LogRatio() < 1 || w.LogRatio() > 1.10 {
			t.Errorf("window %d: log %.3f bytes per new byte, want 1 to 1.10", i, w.LogRatio())
		}
		if w.SnapshotRatio() < 1.5 || w.SnapshotRatio() > 3.4 {
			t.Errorf("window %d: snapshots %.3f bytes per new byte, want 1.5 to 3.4", i, w.SnapshotRatio())
		}
		if w.Ratio() > first.Ratio()*1.08 {
			t.Errorf("window %d after %d KiB: %.3f bytes per new byte, more than 8%% above the first window's %.3f after %d KiB",
				i, w.Before>>10, w.Ratio(), first.Ratio(), first.Before>>10)
		}
	}
	if last := res.Windows[len(res.Windows)-1]; last.Before < 10*first.Before {
		t.Fatalf("the last window starts after %d KiB, not ten times the first's %d KiB", last.Before>>10, first.Before>>10)
	}
	if res.Stored > 2*res.Live {
		t.Errorf("%d bytes stored for %d bytes live: superseded objects were not deleted", res.Stored, res.Live)
	}
}
