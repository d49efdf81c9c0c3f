package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/httpapi"
)

// POST /v1/maps/{map}/flush stores a write-behind map's queue: the map's
// info shows a record queued after a PUT, and none after the flush.
func TestFlushWriteBehind(t *testing.T) {
	y := `hazelcast:
  cluster-name: test
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        write-delay-seconds: 3600
        properties:
          type: hdfs
          namespace: ` + t.TempDir() + `
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
`
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	n, err := stowage.Open(context.Background(), stowage.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	srv := httptest.NewServer(httpapi.Handler(n))
	defer srv.Close()
	base := srv.URL + "/v1/maps/engine_jobs"
	queued := func() int {
		code, body := do(t, http.MethodGet, base, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", base, code, body)
		}
		var mi struct {
			Queued int `json:"write_behind_queued"`
		}
		if err := json.Unmarshal([]byte(body), &mi); err != nil {
			t.Fatal(err)
		}
		return mi.Queued
	}
	if code, body := do(t, http.MethodPut, base+"/entries/job-1", "running"); code != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", code, body)
	}
	if q := queued(); q != 1 {
		t.Fatalf("%d records queued after a PUT, want 1", q)
	}
	if code, body := do(t, http.MethodPost, base+"/flush", ""); code != http.StatusNoContent {
		t.Fatalf("POST flush: %d %s", code, body)
	}
	if q := queued(); q != 0 {
		t.Fatalf("%d records queued after the flush, want 0", q)
	}
}
