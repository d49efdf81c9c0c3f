package stowage_test

import (
	"context"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// TestClusterReadsCreateNothing: reading a map no member holds, through
// any member, finds nothing and makes no member hold it (the forwarded
// get, scan and size create nothing at the owners); the first write
// through the same handle creates it.
func TestClusterReadsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	c := newTCluster(t, func() *config.Config { return persisted(t, dir, "") })
	a, b, d := c.add(), c.add(), c.add()
	c.waitLoaded()
	ctx := context.Background()
	m, err := stowage.LookupMap(a.node, "engineNone", serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 64 { // keys of partitions owned by every member
		key := string(rune('a'+i%26)) + string(rune('a'+i/26))
		if _, ok, err := m.Get(ctx, key); err != nil || ok {
			t.Fatalf("Get %s of a map no member holds: ok %v, err %v", key, ok, err)
		}
	}
	if n, err := m.Size(ctx); err != nil || n != 0 {
		t.Fatalf("Size: %d, %v", n, err)
	}
	if keys, err := m.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("Keys: %v, %v", keys, err)
	}
	for _, x := range []*tmember{a, b, d} {
		if mi, held := x.node.MapInfo("engineNone"); held {
			t.Errorf("member %s holds the map after reads only: %+v", x.id, mi)
		}
	}
	if err := m.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := m.Get(ctx, "k"); err != nil || !ok || v != "v" {
		t.Fatalf("Get after Put: %q %v %v", v, ok, err)
	}
	if _, held := a.node.MapInfo("engineNone"); !held {
		t.Error("the member written through does not hold the map")
	}
}
