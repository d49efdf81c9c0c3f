package stowage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// A map's live bytes are its keys' and values' bytes over every owner.
func TestMapLiveBytesOverOwners(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	n := tc.live()[0].node
	m, err := stowage.GetMap(ctx, n, "live", serde.String(), serde.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	for i := range 200 {
		k, v := fmt.Sprintf("key-%d", i), make([]byte, i%37)
		if err := m.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want += int64(len(k) + len(v))
	}
	got, _, err := tc.live()[2].node.MapLiveBytes(ctx, "live")
	if err != nil || got != want {
		t.Fatalf("live bytes of map live = %d, %v; want %d", got, err, want)
	}
	// Reused for a few seconds: a write now is not seen yet.
	if err := m.Put(ctx, "more", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if again, _, err := tc.live()[2].node.MapLiveBytes(ctx, "live"); err != nil || again != want {
		t.Fatalf("live bytes within the cache time = %d, %v; want the cached %d", again, err, want)
	}
	if fresh, _, err := tc.live()[1].node.MapLiveBytes(ctx, "live"); err != nil || fresh != want+14 {
		t.Fatalf("live bytes on another member = %d, %v; want %d", fresh, err, want+14)
	}
}
