package main

import (
	"bytes"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// TestBenchLoadOnlyWithLatency runs the EAGER load measurements alone on
// gofakes3 behind bench's latency proxy, with a map of small files: the
// proxy saw the load keep several reads in flight at once.
func TestBenchLoadOnlyWithLatency(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	defer srv.Close()
	if err := backend.CreateBucket("bench"); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--load-only", "--load-entries", "10000", "--load-batch", "64", "--dir", t.TempDir(),
		"--fs", "s3a://bench/load", "--property", "fs.s3a.endpoint=" + srv.URL, "--property", "fs.s3a.access.key=AKIDBENCHLOAD",
		"--property", "fs.s3a.secret.key=bench-load-secret", "--fs-latency", "5ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"EAGER load, 10000 entries", "EAGER load of 1000 entries", "with 5ms added to every request"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if bytes.Contains(out.Bytes(), []byte("write-through")) {
		t.Errorf("--load-only ran the write-through measurements:\n%s", out.String())
	}
	m := regexp.MustCompile(`at most (\d+) reads in flight`).FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("no reads in flight reported:\n%s", out.String())
	}
	if n, _ := strconv.Atoi(string(m[1])); n < 2 {
		t.Errorf("at most %d read in flight during the load of 16 small files, want several:\n%s", n, out.String())
	}
}
