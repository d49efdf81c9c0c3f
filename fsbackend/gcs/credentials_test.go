package gcs_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/gcs"
)

// TestNoCredentials: with no key file, no ADC file, no emulator and no
// metadata server, opening fails at once with an error matching
// ErrNoCredentials that names what to set.
func TestNoCredentials(t *testing.T) {
	for _, v := range []string{"STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST", "GCE_METADATA_IP"} {
		t.Setenv(v, "")
	}
	// No gcloud ADC file either.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	for _, cache := range []string{"true", "false"} {
		t.Run("disable.cache="+cache, func(t *testing.T) {
			f, err := fsbackend.Open(context.Background(), fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://" + bucket, "disable.cache": cache})
			if err == nil {
				f.Close()
				t.Skip("Application Default Credentials were found (a metadata server answers here)")
			}
			if !errors.Is(err, gcs.ErrNoCredentials) {
				t.Fatalf("err = %v, want one matching ErrNoCredentials", err)
			}
			for _, w := range []string{"fs.gs.auth.service.account.json.keyfile", "GOOGLE_APPLICATION_CREDENTIALS", "UNAUTHENTICATED", "STORAGE_EMULATOR_HOST"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

// TestRequesterPays: with fs.gs.requester.pays.mode ENABLED every request
// names the billed project (fs.gs.requester.pays.project.id, else
// fs.gs.project.id) as userProject; without it, none does, and
// fs.gs.project.id alone changes nothing.
func TestRequesterPays(t *testing.T) {
	srv := startListening(t)
	target, _ := url.Parse(srv.URL())
	var mu sync.Mutex
	seen := map[string]int{} // userProject value → requests
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Query().Get("userProject")]++
		mu.Unlock()
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	for _, tc := range []struct {
		name string
		kv   []string
		want string // userProject of every request
	}{
		{"disabled", []string{"fs.gs.project.id", "proj-a"}, ""},
		{"enabled with fs.gs.project.id", []string{"fs.gs.project.id", "proj-a", "fs.gs.requester.pays.mode", "ENABLED"}, "proj-a"},
		{"enabled with its own project", []string{"fs.gs.project.id", "proj-a", "fs.gs.requester.pays.mode", "enabled", "fs.gs.requester.pays.project.id", "proj-b"}, "proj-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			p := fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://" + bucket + "/rp", "disable.cache": "true",
				"fs.gs.storage.root.url": proxy.URL, "fs.gs.auth.type": "UNAUTHENTICATED"}
			for i := 0; i+1 < len(tc.kv); i += 2 {
				p[tc.kv[i]] = tc.kv[i+1]
			}
			f, err := fsbackend.Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx := context.Background()
			name := strings.ReplaceAll(tc.name, " ", "-")
			if err := fsbackend.WriteFile(ctx, f, name, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if b, err := fsbackend.ReadFile(ctx, f, name); err != nil || string(b) != "x" {
				t.Fatalf("read %q, %v", b, err)
			}
			if _, err := f.List(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if err := f.Rename(ctx, name, name+".2"); err != nil {
				t.Fatal(err)
			}
			if err := f.Remove(ctx, name+".2"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || seen[tc.want] < 6 {
				t.Fatalf("requests by userProject %v, want all (at least 6) with %q", seen, tc.want)
			}
		})
	}
	for _, bad := range []struct {
		kv   []string
		want []string
	}{
		{[]string{"fs.gs.requester.pays.mode", "ENABLED"}, []string{"fs.gs.requester.pays.mode", "fs.gs.project.id", "fs.gs.requester.pays.project.id"}},
		{[]string{"fs.gs.requester.pays.mode", "AUTO", "fs.gs.project.id", "p"}, []string{"fs.gs.requester.pays.mode", `"AUTO"`, "ENABLED"}},
	} {
		p := fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://" + bucket, "fs.gs.auth.type": "UNAUTHENTICATED"}
		for i := 0; i+1 < len(bad.kv); i += 2 {
			p[bad.kv[i]] = bad.kv[i+1]
		}
		_, err := fsbackend.Open(context.Background(), p)
		for _, w := range bad.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%s) = %v, want an error naming %s", p, err, w)
			}
		}
	}
}
