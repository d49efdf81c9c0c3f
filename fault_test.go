package stowage_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/testhook"
)

// A store failure fails the Put and the HTTP PUT, and the map keeps the
// old value; once the fault is gone writes work again and the failed one
// never appears, not even after a restart.
func TestStoreFailureFailsTheWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sw := errorfs.NewSwitch(errorfs.After(errorfs.OpSync, 0))
	openFS := func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, sw), nil
	}
	n := open(t, stowage.Options{Config: persisted(t, dir, ""), TestHooks: &testhook.Hooks{OpenFS: openFS}})
	m := strMap(t, n, "engine_fault")
	if err := m.Put(ctx, "job", "v1"); err != nil {
		t.Fatal(err)
	}
	sw.Arm()
	err := m.Put(ctx, "job", "v2")
	if !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Put with a failing store: %v, want the injected error", err)
	}
	if v, _, _ := m.Get(ctx, "job"); v != "v1" {
		t.Fatalf("after a failed Put job = %q, want v1", v)
	}
	srv := httptest.NewServer(httpapi.Handler(n))
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/maps/engine_fault/entries/job", strings.NewReader("v3"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 5 {
		t.Fatalf("HTTP PUT with a failing store: %s, want 5xx", resp.Status)
	}
	if v, _, _ := m.Get(ctx, "job"); v != "v1" {
		t.Fatalf("after a failed HTTP PUT job = %q, want v1", v)
	}
	srv.Close()
	sw.Disarm()
	if err := m.Put(ctx, "other", "x"); err != nil {
		t.Fatalf("Put after the fault cleared: %v", err)
	}
	n.Close()
	n = open(t, stowage.Options{Config: persisted(t, dir, "")})
	defer n.Close()
	m = strMap(t, n, "engine_fault")
	if v, _, _ := m.Get(ctx, "job"); v != "v1" {
		t.Fatalf("after restart job = %q, want v1 (failed writes must not reappear)", v)
	}
	if v, _, _ := m.Get(ctx, "other"); v != "x" {
		t.Fatalf("after restart other = %q", v)
	}
}
