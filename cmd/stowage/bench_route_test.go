package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stowage/stowage/serde/keyhash"
)

// statusServer answers GET /v1/status with o.
func statusServer(t *testing.T, o benchOwners) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/status" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(o)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Each key goes to the member that owns its partition in the newest
// table any member answered with; a partition whose owner no member
// answered for goes to the fallback.
func TestBenchRouteSendsToOwner(t *testing.T) {
	const parts = 7
	newer := make([]string, parts)
	for p := range newer {
		newer[p] = []string{"a", "b", "gone"}[p%3]
	}
	older := make([]string, parts)
	for p := range older {
		older[p] = "a" // a stale table: everything on a
	}
	a := statusServer(t, benchOwners{Self: "a", PartitionCount: parts, TableVersion: 4, Owners: older})
	b := statusServer(t, benchOwners{Self: "b", PartitionCount: parts, TableVersion: 5, Owners: newer})
	route, err := benchRoute(context.Background(), http.DefaultClient, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range 200 {
		key := "k" + strings.Repeat("x", i%5) + string(rune('a'+i%26))
		want := map[string]string{"a": a, "b": b, "gone": "fallback"}[newer[keyhash.Partition([]byte(key), parts)]]
		if got := route(key, "fallback"); got != want {
			t.Fatalf("key %q routed to %s, want %s", key, got, want)
		}
		seen[want] = true
	}
	if len(seen) != 3 {
		t.Errorf("200 keys reached %d of the 3 destinations: %v", len(seen), seen)
	}
}

func TestBenchRouteNeedsATable(t *testing.T) {
	a := statusServer(t, benchOwners{Self: "a", PartitionCount: 7})
	if _, err := benchRoute(context.Background(), http.DefaultClient, []string{a}); err == nil || !strings.Contains(err.Error(), "partition table") {
		t.Errorf("no table: %v, want an error naming the partition table", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	missing := strings.TrimPrefix(srv.URL, "http://")
	if _, err := benchRoute(context.Background(), http.DefaultClient, []string{missing}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("no status: %v, want the status named", err)
	}
}
