package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/serde"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// persisted returns a config whose engine* maps persist under dir and
// load EAGERly.
func persisted(t testing.TB, dir string, extra string) *config.Config {
	t.Helper()
	return persistedMode(t, dir, "EAGER", extra)
}

// persistedMode is persisted with the given initial-mode.
func persistedMode(t testing.TB, dir, mode, extra string) *config.Config {
	t.Helper()
	y := `hazelcast:
  cluster-name: test
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: ` + mode + `
        properties:
          type: hdfs
          namespace: ` + dir + `
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
` + extra
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func open(t *testing.T, opts stowage.Options) *stowage.Node {
	t.Helper()
	n, err := stowage.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func strMap(t *testing.T, n *stowage.Node, name string) *stowage.Map[string, string] {
	t.Helper()
	m, err := stowage.GetMap(context.Background(), n, name, serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMapOperations(t *testing.T) {
	ctx := context.Background()
	for _, persist := range []bool{false, true} {
		t.Run(fmt.Sprintf("persisted=%v", persist), func(t *testing.T) {
			var cfg *config.Config
			if persist {
				cfg = persisted(t, t.TempDir(), "")
			}
			n := open(t, stowage.Options{Config: cfg})
			defer n.Close()
			m := strMap(t, n, "engine_ops")
			if err := m.Put(ctx, "a", "1"); err != nil {
				t.Fatal(err)
			}
			if v, ok, _ := m.Get(ctx, "a"); !ok || v != "1" {
				t.Fatalf("Get a = %q, %v", v, ok)
			}
			if old, loaded, _ := m.PutIfAbsent(ctx, "a", "2"); !loaded || old != "1" {
				t.Fatalf("PutIfAbsent on present key: %q, %v", old, loaded)
			}
			if _, loaded, _ := m.PutIfAbsent(ctx, "b", "2"); loaded {
				t.Fatal("PutIfAbsent on absent key reported loaded")
			}
			if _, replaced, _ := m.Replace(ctx, "zz", "x"); replaced {
				t.Fatal("Replace of an absent key replaced")
			}
			if old, replaced, _ := m.Replace(ctx, "b", "3"); !replaced || old != "2" {
				t.Fatalf("Replace b: %q, %v", old, replaced)
			}
			if ok, _ := m.ContainsKey(ctx, "zz"); ok {
				t.Fatal("Replace of an absent key created it")
			}
			if old, removed, _ := m.Remove(ctx, "a"); !removed || old != "1" {
				t.Fatalf("Remove a: %q, %v", old, removed)
			}
			if _, removed, _ := m.Remove(ctx, "a"); removed {
				t.Fatal("second Remove removed")
			}
			v, ok, err := m.Compute(ctx, "c", func(old string, ok bool) (string, bool) { return old + "x", true })
			if err != nil || !ok || v != "x" {
				t.Fatalf("Compute c = %q, %v, %v", v, ok, err)
			}
			if _, ok, _ := m.Compute(ctx, "c", func(string, bool) (string, bool) { return "", false }); ok {
				t.Fatal("Compute with keep=false kept the entry")
			}
			if size, _ := m.Size(ctx); size != 1 {
				t.Fatalf("Size = %d, want 1 (b)", size)
			}
			keys, _ := m.Keys(ctx)
			if len(keys) != 1 || keys[0] != "b" {
				t.Fatalf("Keys = %v", keys)
			}
			if err := m.Clear(ctx); err != nil {
				t.Fatal(err)
			}
			if size, _ := m.Size(ctx); size != 0 {
				t.Fatalf("Size after Clear = %d", size)
			}
		})
	}
}

func TestComputeIsAtomic(t *testing.T) {
	ctx := context.Background()
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), "")})
	defer n.Close()
	m, err := stowage.GetMap(ctx, n, "engine_counter", serde.String(), serde.Msgpack[int]())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, _, err := m.Compute(ctx, "n", func(old int, _ bool) (int, bool) { return old + 1, true }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v, _, _ := m.Get(ctx, "n"); v != 800 {
		t.Fatalf("counter = %d, want 800", v)
	}
}

func TestRestartLoadsEverything(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := open(t, stowage.Options{Config: persisted(t, dir, "")})
	m := strMap(t, n, "engine_jobs")
	other := strMap(t, n, "transient")
	want := map[string]string{}
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("job-%d", i%700)
		if i%5 == 4 {
			if err := m.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			delete(want, k)
			continue
		}
		v := fmt.Sprintf("state-%d", i)
		if err := m.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	if err := other.Put(ctx, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = open(t, stowage.Options{Config: persisted(t, dir, "")})
	defer n.Close()
	// The persisted map is found and loaded without being asked for.
	if err := n.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mi := range n.Maps() {
		if mi.Name == "engine_jobs" && mi.Loaded && mi.Size == len(want) {
			found = true
		}
	}
	if !found {
		t.Fatalf("engine_jobs not loaded EAGERly with %d entries: %+v", len(want), n.Maps())
	}
	m = strMap(t, n, "engine_jobs")
	for k, v := range want {
		if got, ok, err := m.Get(ctx, k); err != nil || !ok || got != v {
			t.Fatalf("%s = %q, %v, %v; want %q", k, got, ok, err, v)
		}
	}
	if size, _ := m.Size(ctx); size != len(want) {
		t.Fatalf("size %d, want %d", size, len(want))
	}
	if _, ok, _ := strMap(t, n, "transient").Get(ctx, "x"); ok {
		t.Fatal("a map without map-store came back after restart")
	}
}

func TestInvalidMapNames(t *testing.T) {
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), "")})
	defer n.Close()
	for _, name := range []string{"", ".", "..", "engine/../x", "engine\x00", "a/b", `a\b`} {
		if _, err := stowage.GetMap(context.Background(), n, name, serde.String(), serde.String()); !errors.Is(err, stowage.ErrInvalidMapName) {
			t.Errorf("map name %q: err = %v, want ErrInvalidMapName", name, err)
		}
	}
}

func TestDiskStaysBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const seg = 256 << 10
	n := open(t, stowage.Options{Config: persisted(t, dir, "          block.size: "+fmt.Sprint(seg)+"\n")})
	m := strMap(t, n, "engine_overwrite")
	const keys, rounds = 2000, 10
	val := strings.Repeat("v", 200)
	var live int64
	for k := 0; k < keys; k++ {
		live += int64(len(fmt.Sprintf("key-%05d", k)) + len(val))
	}
	maxDisk := int64(0)
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for k := w; k < keys; k += 8 {
					if err := m.Put(ctx, fmt.Sprintf("key-%05d", k), val); err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		if d := diskBytes(t, filepath.Join(dir, "test", "engine_overwrite")); d > maxDisk {
			maxDisk = d
		}
	}
	n.Close()
	total := int64(keys * rounds * (len(val) + 10))
	t.Logf("live %d B, wrote %d B, max on disk %d B (%.2fx live)", live, total, maxDisk, float64(maxDisk)/float64(live))
	// Invariant 5: about 2x live plus one log segment, whatever was written.
	if limit := 2*live + 2*seg + 64<<10; maxDisk > limit {
		t.Fatalf("disk reached %d B, over the bound %d B (live %d B)", maxDisk, limit, live)
	}
}

func diskBytes(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func TestHTTPPutIsDurable(t *testing.T) {
	dir := t.TempDir()
	n := open(t, stowage.Options{Config: persisted(t, dir, "")})
	srv := httptest.NewServer(httpapi.Handler(n))
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/maps/engine_http/entries/job-1", strings.NewReader("state"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT: %s", resp.Status)
	}
	for _, path := range []string{"/healthz", "/metrics", "/v1/cluster", "/v1/maps/engine_http", "/v1/maps/engine_http/entries"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s: %s", path, resp.Status, body)
		}
	}
	resp, _ = http.Get(srv.URL + "/v1/maps/..%2F..%2Fetc/entries/x")
	if resp != nil {
		resp.Body.Close()
		if resp.StatusCode/100 != 4 {
			t.Errorf("map name escaping its directory: %s, want 4xx", resp.Status)
		}
	}
	srv.Close()
	n.Close()
	n = open(t, stowage.Options{Config: persisted(t, dir, "")})
	defer n.Close()
	if v, ok, err := strMap(t, n, "engine_http").Get(context.Background(), "job-1"); err != nil || !ok || v != "state" {
		t.Fatalf("after restart job-1 = %q, %v, %v", v, ok, err)
	}
}

var _ = fsbackend.Join
