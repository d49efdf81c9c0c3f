package writeamp_test

import (
	"context"
	"testing"

	"github.com/stowage/stowage/bench/writeamp"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// objectStore is memfs as an object store sees it: no durable append, no
// atomic rename, so the file map store writes one new file per batch.
type objectStore struct{ *memfs.FS }

func (objectStore) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{ConditionalCreate: true}
}

// TestBytesPerNewByteDoesNotGrow runs six windows in memory, the last
// after about fifty times the data of the first, and checks what
// the s3 back end's test checks over HTTP: the log costs at most 1.10
// bytes per new byte, snapshots between 1.5 and 3.4, no window more than
// 8% above the first, and deleted superseded files.
func TestBytesPerNewByteDoesNotGrow(t *testing.T) {
	f := objectStore{memfs.New()}
	res, err := writeamp.Run(context.Background(), f, writeamp.Options{Partitions: 4, Windows: 6})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Windows[0]
	for i, w := range res.Windows {
		t.Logf("window %d: %s", i, w)
		if w.LogRatio() < 1 || w.LogRatio() > 1.10 || w.SnapshotRatio() < 1.5 || w.SnapshotRatio() > 3.4 || w.Ratio() > first.Ratio()*1.08 {
			t.Errorf("window %d out of bounds (first window %.3f)", i, first.Ratio())
		}
	}
	if last := res.Windows[len(res.Windows)-1]; last.Before < 40*first.Before {
		t.Fatalf("the last window starts after %d KiB, not 40 times the first's %d KiB", last.Before>>10, first.Before>>10)
	}
	if res.Stored > 2*res.Live {
		t.Errorf("%d bytes stored for %d bytes live", res.Stored, res.Live)
	}
	c := res.Total
	if c.Log == 0 || c.Snapshot == 0 || c.Other == 0 || c.Files < int64(len(res.Windows)) {
		t.Fatalf("files not told apart: %+v", c)
	}
}

// TestCountingRename: a rename on a store without atomic rename is a copy,
// and counts again.
func TestCountingRename(t *testing.T) {
	ctx := context.Background()
	c := &writeamp.Counting{FS: objectStore{memfs.New()}}
	if err := fsbackend.WriteFile(ctx, c, "g1/snap/3/a.snap", make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := fsbackend.WriteFile(ctx, c, "g1/log/run/000000000001.log", make([]byte, 7)); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(ctx, "g1/snap/3/a.snap", "g1/snap/3/b.snap"); err != nil {
		t.Fatal(err)
	}
	if got := c.Counts(); got != (writeamp.Counts{Log: 7, Snapshot: 20, Files: 3}) {
		t.Fatalf("counts %+v", got)
	}
	if c.Rounds(4) != 0 || c.Rounds(1) != 0 {
		t.Fatalf("rounds %d %d, want 0: only partition 3 has snapshots", c.Rounds(4), c.Rounds(1))
	}
}
