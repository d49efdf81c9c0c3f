package dmap

import (
	"context"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// TestWaitLoadedWokenByActivation: WaitLoaded returns once the last
// partition of an EAGER persisted map is active and ready, woken by that,
// not by its periodic look (made an hour here).
func TestWaitLoadedWokenByActivation(t *testing.T) {
	st := newCountingStore()
	self := cluster.Member{ID: "m1", Addr: "m1"}
	e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second,
		OpenMap: func(context.Context, string) (MapSpec, error) { return MapSpec{Store: st}, nil }})
	defer e.Close()
	e.loaded.poll = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := e.Map(ctx, "engine_jobs"); err != nil {
		t.Fatal(err)
	}
	e.Start()
	if err := e.WaitLoaded(ctx); err != nil {
		t.Fatalf("WaitLoaded: %v", err)
	}
	if ok, why := e.localLoaded(); !ok {
		t.Fatalf("WaitLoaded returned while not loaded: %s", why)
	}
}
