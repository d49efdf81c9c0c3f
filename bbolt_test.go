package stowage_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/partition"
)

// boltConfig returns a config whose engine* maps are kept in the bbolt
// file at path.
func boltConfig(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(nil, []byte(`hazelcast:
  cluster-name: test
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: bbolt
          path: `+path+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A node on a bbolt map store keeps its maps across a restart, and finds
// them in the file at Open: they are listed and EAGER-loaded before
// anyone asks for them, so once the node is loaded (and /healthz 200)
// every entry is in memory.
func TestBBoltRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "maps.db")
	n := open(t, stowage.Options{Config: boltConfig(t, path)})
	want := map[string]map[string]string{"engine_a": {}, "engine_b": {}}
	for name, w := range want {
		m := strMap(t, n, name)
		for i := 0; i < 300; i++ {
			k := fmt.Sprintf("job-%d", i%120)
			if i%7 == 6 {
				if err := m.Delete(ctx, k); err != nil {
					t.Fatal(err)
				}
				delete(w, k)
				continue
			}
			v := fmt.Sprintf("%s-state-%d", name, i)
			if err := m.Put(ctx, k, v); err != nil {
				t.Fatal(err)
			}
			w[k] = v
		}
	}
	if err := strMap(t, n, "transient").Put(ctx, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = open(t, stowage.Options{Config: boltConfig(t, path)})
	defer n.Close()
	if err := n.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := healthz(n); code != http.StatusOK {
		t.Fatalf("/healthz once loaded: %d %s", code, body)
	}
	// No map was asked for: the maps found in the file are loaded.
	if got := len(n.Maps()); got != len(want) {
		t.Fatalf("after restart the node holds %d maps, want %d: %+v", got, len(want), n.Maps())
	}
	for name, w := range want {
		mi := mapInfo(t, n, name)
		if !mi.Persisted || !mi.Loaded || mi.LoadedPartitions != partition.DefaultCount || mi.Size != len(w) {
			t.Fatalf("%s once the node is loaded: %+v; want every partition loaded with %d entries", name, mi, len(w))
		}
	}
	for name, w := range want {
		m := strMap(t, n, name)
		for i := 0; i < 120; i++ {
			k := fmt.Sprintf("job-%d", i)
			v, ok, err := m.Get(ctx, k)
			if err != nil || ok != (w[k] != "") || v != w[k] {
				t.Fatalf("%s %s = %q, %v, %v; want %q", name, k, v, ok, err, w[k])
			}
		}
	}
	if _, ok, _ := strMap(t, n, "transient").Get(ctx, "x"); ok {
		t.Fatal("a map without map-store came back after restart")
	}
}
