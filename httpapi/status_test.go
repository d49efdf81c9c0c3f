package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/httpapi"
)

func TestStatusReportsMapsStorageAndCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n, _ := node(t, dir)

	fsys, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := checkpoint.Open(ctx, checkpoint.Options{FS: fsys, Namespace: dir + "/checkpoint/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cps.Close(); fsys.Close() })
	for id := int64(1); id <= 3; id++ {
		if _, err := cps.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "job-7", PipelineID: 2, CheckpointID: id, States: []byte("state")}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpapi.Handler(n, httpapi.WithCheckpoints(cps)))
	t.Cleanup(srv.Close)

	for i := range 20 {
		if code, body := do(t, http.MethodPut, srv.URL+"/v1/maps/engineJobs/entries/k"+string(rune('a'+i)), "value"); code != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", code, body)
		}
	}
	code, body := do(t, http.MethodGet, srv.URL+"/v1/status", "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/status: %d %s", code, body)
	}
	if strings.Contains(body, dir) {
		t.Errorf("the status names a server path (%s): %s", dir, body)
	}
	var st httpapi.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("status: %v: %s", err, body)
	}
	if len(st.Members) != 1 || !st.Members[0].Self || !st.Members[0].Master || !st.Members[0].Live || st.Members[0].Partitions != 271 {
		t.Errorf("members: %+v, want this member alone owning 271 partitions", st.Members)
	}
	if len(st.Owners) != 271 || st.Owners[0] != st.Self || st.Owners[270] != st.Self {
		t.Errorf("owners: %d partitions, first %q, want 271 owned by %q", len(st.Owners), st.Owners[0], st.Self)
	}
	if !st.Loaded || !st.Safe || st.PartitionTableVer == 0 {
		t.Errorf("loaded %v safe %v table %d, want a loaded safe member with a table", st.Loaded, st.Safe, st.PartitionTableVer)
	}
	if len(st.Maps) != 1 {
		t.Fatalf("maps: %+v", st.Maps)
	}
	m := st.Maps[0]
	if m.Name != "engineJobs" || m.Entries == nil || *m.Entries != 20 || m.Size != 20 || !m.Persisted {
		t.Errorf("map: %+v, want engineJobs with 20 entries", m)
	}
	if m.StoreLatency == nil || m.StoreLatency.Count != 20 || m.StoreLatency.P50Seconds <= 0 || m.StoreLatency.P99Seconds < m.StoreLatency.P50Seconds {
		t.Errorf("store latency: %+v, want 20 writes with 0 < p50 <= p99", m.StoreLatency)
	}
	if m.Disk == nil || m.Disk.LogFiles == 0 || m.Disk.LogBytes < 20*int64(len("value")) || m.Disk.DiskBytes < m.Disk.LogBytes+m.Disk.SnapshotBytes {
		t.Errorf("disk usage: %+v, want the log of 20 writes", m.Disk)
	}
	// Live: 20 keys of 2 bytes ("ka".."kt") with 5-byte values.
	if m.LiveBytes == nil || *m.LiveBytes != 20*(2+5) {
		t.Errorf("live bytes: %v, want %d", m.LiveBytes, 20*(2+5))
	} else if m.Disk != nil && (m.DiskPerLive == nil || *m.DiskPerLive != float64(m.Disk.DiskBytes)/float64(*m.LiveBytes)) {
		t.Errorf("disk/live: %v, want %d / %d", m.DiskPerLive, m.Disk.DiskBytes, *m.LiveBytes)
	}
	if st.Checkpoints == nil || len(st.Checkpoints.Jobs) != 1 {
		t.Fatalf("checkpoints: %+v", st.Checkpoints)
	}
	j := st.Checkpoints.Jobs[0]
	if j.Job != "job-7" || len(j.Pipelines) != 1 || j.Pipelines[0].Pipeline != 2 || j.Pipelines[0].Latest != 3 || j.Pipelines[0].Checkpoints != 3 {
		t.Errorf("checkpoint job: %+v, want job-7 pipeline 2 with 3 checkpoints, latest 3", j)
	}
	// The start read every partition from the map store: one take-over.
	if len(st.TakeOvers) == 0 || st.TakeOvers[0].Source != "store" || st.TakeOvers[0].Partitions != 271 {
		t.Errorf("take-overs: %+v, want the start's 271 partitions from the store", st.TakeOvers)
	}
	ct := st.ClusterTakeOvers
	if len(ct.Unanswered) != 0 || len(ct.TakeOvers) != len(st.TakeOvers) || len(ct.TakeOvers) == 0 ||
		ct.TakeOvers[len(ct.TakeOvers)-1].Member != st.Self || ct.TakeOvers[len(ct.TakeOvers)-1].Source != "store" {
		t.Errorf("cluster take-overs: %+v, want this member's, newest first, ending with the start's load", ct)
	}
}

func TestStatusWithoutCheckpointStorageSaysSo(t *testing.T) {
	_, srv := node(t, t.TempDir())
	code, body := do(t, http.MethodGet, srv.URL+"/v1/status", "")
	var st httpapi.Status
	if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("GET /v1/status: %d %s", code, body)
	}
	if st.Checkpoints != nil || !strings.Contains(body, `"checkpoints": null`) {
		t.Errorf("checkpoints without a storage: %+v, want null", st.Checkpoints)
	}
	if len(st.Maps) != 0 || st.Maps == nil {
		t.Errorf("maps of a new member: %#v, want an empty list", st.Maps)
	}
}

func TestStatusPageIsServedAndUnknownPathsAnswerJSON(t *testing.T) {
	dir := t.TempDir()
	_, srv := node(t, dir)
	for _, tc := range []struct{ path, ctype, want string }{
		{"/", "text/html", `<script src="/ui/app.js">`},
		{"/ui/", "text/html", `<script src="/ui/app.js">`},
		{"/ui/app.js", "text/javascript", `fetch("/v1/status"`},
		{"/ui/style.css", "text/css", "#grid"},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = readBody(&b, resp)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) || !strings.Contains(b.String(), tc.want) {
			t.Errorf("GET %s: %d %s, want 200 %s containing %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.ctype, tc.want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
	}
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/ui/nothing.js", http.StatusNotFound},
		{http.MethodGet, "/ui/../../etc/passwd", http.StatusNotFound},
		{http.MethodGet, "/v1/nothing", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusNotFound},
	} {
		code, body := do(t, tc.method, srv.URL+tc.path, "")
		var e map[string]string
		if code != tc.code || json.Unmarshal([]byte(body), &e) != nil || e["error"] == "" {
			t.Errorf("%s %s: %d %s, want %d with a JSON error", tc.method, tc.path, code, body, tc.code)
		}
		if strings.Contains(body, dir) {
			t.Errorf("%s %s names a server path: %s", tc.method, tc.path, body)
		}
	}
}

// readBody copies resp's body into b and closes it.
func readBody(b *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(b, resp.Body)
}
