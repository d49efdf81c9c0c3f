package hdfs_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestRealSyncFsyncCount counts the DataNode's fsyncs for Writer.Sync on
// a file kept open: one per Sync (hsync) by default, none with
// stowage.hdfs.sync-on-close false (hflush). The fixture runs with
// Hadoop's default dfs.datanode.synconclose false, so only the client's
// syncBlock makes the DataNode sync.
func TestRealSyncFsyncCount(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the DataNode's JMX metrics, about 30 s")
	}
	need(t, envHDFS, envCtl)
	addrs := strings.Fields(ctl(t, envCtl, "dn-http"))
	if len(addrs) != 1 {
		t.Fatalf("dn-http = %v, want one DataNode", addrs)
	}
	httpAddr := addrs[0]
	const syncs = 6
	measure := func(kv ...string) int64 {
		t.Helper()
		f, _, _ := openTest(t, kv...)
		before := settledActivity(t, httpAddr)
		w, err := f.Create(context.Background(), "open")
		if err != nil {
			t.Fatal(err)
		}
		for i := range syncs {
			if _, err := w.Write([]byte{byte('a' + i), ';'}); err != nil {
				t.Fatal(err)
			}
			if err := w.Sync(); err != nil {
				t.Fatalf("Sync %d: %v", i, err)
			}
		}
		after := settledActivity(t, httpAddr)
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		return after.FsyncCount - before.FsyncCount
	}
	if d := measure("stowage.hdfs.sync-on-close", "false"); d != 0 {
		t.Errorf("sync-on-close false: FsyncCount grew by %d for %d Syncs, want 0", d, syncs)
	}
	if d := measure(); d != syncs {
		t.Errorf("default: FsyncCount grew by %d for %d Syncs, want one per Sync", d, syncs)
	}
}

// TestRealSyncedBytesRecovered: bytes synced into a file whose writer
// never closed it are not visible to another client until the file is
// recovered, and then every synced byte is there.
func TestRealSyncedBytesRecovered(t *testing.T) {
	writerFS, _, dir := openTest(t, "disable.cache", "true")
	raw := openRaw(t, clusterProps("disable.cache", "true")) // another client
	readerFS, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := writerFS.Create(ctx, "open")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	synced := bytes.Repeat([]byte("synced;"), 200) // more than a packet's worth of small writes
	for i := 0; i < len(synced); i += 7 {
		if _, err := w.Write(synced[i : i+7]); err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	if _, err := w.Write([]byte("not synced")); err != nil {
		t.Fatal(err)
	}

	r, err := readerFS.Open(ctx, "open")
	if err != nil {
		t.Fatal(err)
	}
	u, ok := r.(fsbackend.UnfinishedReader)
	if !ok || !u.Unfinished() {
		t.Errorf("Open of a file being written: Unfinished = %v (implemented %v), want true", ok && u.Unfinished(), ok)
	}
	r.Close()

	// The writer is abandoned, as if its process died.
	if err := fsbackend.Recover(ctx, readerFS, "open"); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	got := readFile(t, readerFS, "open")
	if len(got) < len(synced) || !bytes.Equal(got[:len(synced)], synced) {
		t.Fatalf("after Recover: read %d bytes (%.40q...), want at least the %d synced", len(got), got, len(synced))
	}
	r, err = readerFS.Open(ctx, "open")
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := r.(fsbackend.UnfinishedReader); !ok || u.Unfinished() {
		t.Errorf("Open of a recovered file: Unfinished true, want false")
	}
	r.Close()
	// The writer lost the lease: it cannot complete the file.
	if err := w.Close(); err == nil {
		t.Errorf("Close by the writer whose lease was recovered: nil error, want one")
	}
	// Recover on a closed file does nothing.
	if err := fsbackend.Recover(ctx, readerFS, "open"); err != nil {
		t.Fatalf("Recover of a closed file: %v", err)
	}
}
