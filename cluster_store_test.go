package stowage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stowage/stowage"
)

// Every member stops; a new cluster on the same shared storage loads
// every acknowledged write (EAGER, each owner its own partitions).
func TestClusterFullRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := sharedConfig(t, dir, 1, 3)
	tc := newTCluster(t, cfg)
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	h := newHistory()
	h.mapName = "engine_runningJobState"
	stop := make(chan struct{})
	wg := h.writers(tc, 8, 40, stop)
	waitAcks(t, h, 400)
	close(stop)
	wg.Wait()
	for _, m := range tc.live() {
		tc.kill(m)
	}

	again := newTCluster(t, cfg)
	for i := 0; i < 3; i++ {
		again.add()
	}
	again.waitLoaded()
	for _, m := range again.live() {
		h.check(t, m)
	}
}

// Without backups, a dead member's partitions are loaded from the map
// store by their new owners: shared storage loses nothing.
func TestClusterNoBackupsReloadFromStore(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, sharedConfig(t, dir, 0, 1))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	h := newHistory()
	h.mapName = "engine_runningJobInfo"
	failoverOn(t, tc, h, func() { tc.kill(tc.live()[1]) })
}

// A member whose map-store directory is not the one the others use (a
// local directory on its own host, say) refuses to start, naming the
// problem, instead of splitting the state.
func TestClusterRefusesUnsharedStorage(t *testing.T) {
	tc := newTCluster(t, sharedConfig(t, t.TempDir(), 1, 1))
	tc.add()
	tc.waitLoaded()
	_, err := tc.tryAdd(sharedConfig(t, t.TempDir(), 1, 1)())
	if !errors.Is(err, stowage.ErrNotShared) || !strings.Contains(err.Error(), "engine*") {
		t.Fatalf("a member on other storage started, or the error does not say why: %v", err)
	}
	// The same storage is accepted.
	if _, err := tc.tryAdd(tc.cfg()); err != nil {
		t.Fatalf("a member on the shared storage was refused: %v", err)
	}
}
