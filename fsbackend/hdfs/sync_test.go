package hdfs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dnActivity is what the test reads of the DataNode's DataNodeActivity
// metrics: blocks received, and blocks synced to disk.
type dnActivity struct {
	BlocksWritten int64
	FsyncCount    int64
}

// jmxRefresh is how long the DataNode's JMX view of its metrics may lag
// (Hadoop's metrics period, 10 s), with a margin.
const jmxRefresh = 12 * time.Second

// readActivity reads the metrics of the fixture's DataNode over its HTTP
// server (the control port's dn-http names it).
func readActivity(t *testing.T, httpAddr string) dnActivity {
	t.Helper()
	url := "http://" + httpAddr + "/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Beans []dnActivity }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if len(body.Beans) != 1 {
		t.Fatalf("%s: %d DataNodeActivity beans, want 1", url, len(body.Beans))
	}
	return body.Beans[0]
}

// settledActivity returns metrics that count every block written before
// the call: the first values that differ from the ones read at once (the
// JMX view was refreshed since), or those if nothing changed within a
// refresh period.
func settledActivity(t *testing.T, httpAddr string) dnActivity {
	t.Helper()
	first := readActivity(t, httpAddr)
	for end := time.Now().Add(jmxRefresh); time.Now().Before(end); {
		time.Sleep(250 * time.Millisecond)
		if a := readActivity(t, httpAddr); a != first {
			return a
		}
	}
	return first
}

// activityAfter waits until the DataNode reports at least blocks more
// written blocks than before, and returns the metrics that show them.
func activityAfter(t *testing.T, httpAddr string, before dnActivity, blocks int64) dnActivity {
	t.Helper()
	var a dnActivity
	for end := time.Now().Add(3 * jmxRefresh); time.Now().Before(end); {
		if a = readActivity(t, httpAddr); a.BlocksWritten >= before.BlocksWritten+blocks {
			return a
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("DataNode reports %d blocks written, want at least %d (%d before)", a.BlocksWritten, before.BlocksWritten+blocks, before.BlocksWritten)
	return a
}

// TestRealSyncOnClose counts the DataNode's fsyncs: with
// stowage.hdfs.sync-on-close true (the default) every block of every
// closed file was synced to disk before Close returned; with false none
// is (the fixture runs with Hadoop's default dfs.datanode.synconclose
// false, so only the client's syncBlock makes the DataNode sync).
func TestRealSyncOnClose(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the DataNode's JMX metrics, about 30 s")
	}
	need(t, envHDFS, envCtl)
	addrs := strings.Fields(ctl(t, envCtl, "dn-http"))
	if len(addrs) != 1 {
		t.Fatalf("dn-http = %v, want one DataNode", addrs)
	}
	httpAddr := addrs[0]

	const files = 4
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB / 2: three 1 MiB blocks
	const blocks = files + 3
	write := func(t *testing.T, kv ...string) {
		f, _, _ := openTest(t, kv...)
		for i := range files {
			writeFile(t, f, fmt.Sprintf("small-%d", i), []byte(fmt.Sprintf("record %d", i)))
		}
		writeFile(t, f, "big", big)
		if got := readFile(t, f, "big"); !bytes.Equal(got, big) {
			t.Fatalf("big: read %d bytes back, not the %d written", len(got), len(big))
		}
	}

	// The DataNode's counters are the whole DataNode's: other test
	// packages may write to the same fixture meanwhile. A measurement
	// counts only when the blocks written in its window are about this
	// test's own (at least blocks; the test's files take 9 on the
	// fixture, other packages' bursts hundreds); otherwise it is taken
	// again. scripts/test runs this test before the parallel run, so there
	// its first window is clean.
	measure := func(what string, kv ...string) (written, fsyncs int64) {
		t.Helper()
		for attempt := 1; ; attempt++ {
			before := settledActivity(t, httpAddr)
			write(t, kv...)
			after := activityAfter(t, httpAddr, before, blocks)
			written, fsyncs = after.BlocksWritten-before.BlocksWritten, after.FsyncCount-before.FsyncCount
			t.Logf("%s: %d blocks written, %d fsyncs", what, written, fsyncs)
			if written <= 2*blocks {
				return written, fsyncs
			}
			if attempt == 5 {
				t.Fatalf("%s: other writers' blocks in each of %d windows (last %d blocks for this test's %d)", what, attempt, written, blocks)
			}
		}
	}
	if _, d := measure("sync-on-close false", "stowage.hdfs.sync-on-close", "false"); d != 0 {
		t.Errorf("sync-on-close false: FsyncCount grew by %d for %d blocks written, want 0", d, blocks)
	}
	if written, d := measure("sync-on-close default"); d != written {
		t.Errorf("sync-on-close default: FsyncCount grew by %d for %d blocks written (%d files), want one per block", d, written, files+1)
	}
}

// TestRealSyncOnCloseEmptyFile: a file with no bytes has no block to sync
// and closes as before.
func TestRealSyncOnCloseEmptyFile(t *testing.T) {
	f, _, _ := openTest(t)
	w, err := f.Create(context.Background(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close of an empty file: %v", err)
	}
	if st, err := f.Stat(context.Background(), "empty"); err != nil || st.Size != 0 {
		t.Fatalf("Stat(empty) = %+v, %v; want size 0", st, err)
	}
}
