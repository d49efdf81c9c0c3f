package stowage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/httpapi"
)

// /metrics serves, after puts to a persisted map, the write-through
// latency and group-commit histograms with samples in them.
func TestMetricsHistograms(t *testing.T) {
	ctx := context.Background()
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), "")})
	defer n.Close()
	m := strMap(t, n, "engine_metrics")
	const puts = 20
	for i := 0; i < puts; i++ {
		if err := m.Put(ctx, fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	httpapi.Handler(n).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, tc := range []struct {
		name   string
		series string // the _count sample's name with its labels
		min    float64
	}{
		{"stowage_store_latency_seconds", `stowage_store_latency_seconds_count{map="engine_metrics"}`, puts},
		{"stowage_log_batch_records", "stowage_log_batch_records_count", 1},
		{"stowage_log_batch_bytes", "stowage_log_batch_bytes_count", 1},
		{"stowage_log_batch_seconds", "stowage_log_batch_seconds_count", 1},
	} {
		if !strings.Contains(body, "# TYPE "+tc.name+" histogram\n") {
			t.Errorf("/metrics has no histogram %s", tc.name)
			continue
		}
		count, ok := sample(body, tc.series)
		if !ok || count < tc.min {
			t.Errorf("/metrics: %s = %v (found %v), want at least %v", tc.series, count, ok, tc.min)
		}
		if _, ok := sample(body, strings.Replace(tc.series, "_count", "_sum", 1)); !ok {
			t.Errorf("/metrics lacks %s's sum", tc.name)
		}
		if !strings.Contains(body, tc.name+"_bucket{") {
			t.Errorf("/metrics lacks %s's buckets", tc.name)
		}
	}
	// Every record is in some batch: the records histogram sums to the
	// puts (no other map wrote).
	if sum, _ := sample(body, "stowage_log_batch_records_sum"); sum < puts {
		t.Errorf("stowage_log_batch_records_sum = %v, want at least %d", sum, puts)
	}
}

// sample returns the value of the sample named series (name and labels
// exactly as printed) in Prometheus text output.
func sample(body, series string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}
