package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// A member process writing its map store to an S3 server that answers
// every request after 10 ms, so that the pipelined commit has several
// batch objects in flight at once (the server sees their PUTs overlap), is
// killed with SIGKILL under 32 writers; after each restart every
// acknowledged write is there.
func TestCrashSIGKILLOnSlowS3WithBatchesInFlight(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("crash"); err != nil {
		t.Fatal(err)
	}
	inner := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	var now, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/log/") {
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			defer now.Add(-1)
		}
		time.Sleep(10 * time.Millisecond)
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	err := writeConfigDirOn(cfgDir, "crashslows3", "/imap", "/checkpoint/", netSpec{}, map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://crash/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDCRASHSLOWS3",
		"fs.s3a.secret.key":               "slow-s3-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	})
	if err != nil {
		t.Fatal(err)
	}
	wl := newWorkload("engine_crash_slows3", 32, 20)
	var out bytes.Buffer
	res, err := crashRounds(context.Background(), cfgDir, filepath.Join(dir, "node.log"), wl, 3, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("at most %d log PUTs in progress at once", most.Load())
	if res.acks == 0 || res.checked == 0 {
		t.Fatalf("nothing was written or checked: %+v", res)
	}
	if res.lost != 0 {
		t.Fatalf("%d keys lost or wrong after SIGKILL with batches in flight", res.lost)
	}
	if most.Load() < 2 {
		t.Fatalf("at most %d log PUTs in progress at once: the crashes did not happen with several batches in flight", most.Load())
	}
}
