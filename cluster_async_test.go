package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/partition"
)

// Async backups (async-backup-count) do not hold up the acknowledgement:
// with the only backup of a partition hung, its writes are still
// acknowledged; once the backup answers again it holds them.
func TestClusterAsyncBackupDoesNotDelayAck(t *testing.T) {
	tc := newTCluster(t, memoryConfig(0, 1))
	m1, m2, m3 := tc.add(), tc.add(), tc.add()
	tc.waitLoaded()
	waitBalanced(t, tc)
	waitSafe(t, tc)
	var keys []string
	for i := 0; len(keys) < 100; i++ {
		k := fmt.Sprintf("a%d", i)
		rs := m1.node.Replicas(partition.Of([]byte(k), partition.DefaultCount))
		if len(rs) == 2 && rs[0] != m3.id && rs[1] == m3.id {
			keys = append(keys, k)
		}
	}
	tc.net.Freeze(m3.id)
	t.Cleanup(func() { tc.net.Thaw(m3.id) })
	ctx := context.Background()
	start := time.Now()
	for i, k := range keys {
		via := []*tmember{m1, m2}[i%2]
		// A write that waited for the hung backup would never end: the
		// bound only turns that into a failure instead of a hang.
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := strMap(t, via.node, "jobs").Put(wctx, k, "v-"+k)
		cancel()
		if err != nil {
			fatalDump(t, "put %s (async backup %s hung) via %s: %v", k, m3.id, via.id, err)
		}
	}
	t.Logf("%d writes acknowledged in %v with their async backup hung", len(keys), time.Since(start).Round(time.Millisecond))
	tc.net.Thaw(m3.id)
	waitUntil(t, func() bool {
		for _, mi := range m3.node.Maps() {
			if mi.Name == "jobs" {
				return mi.Backups >= len(keys)
			}
		}
		return false
	})
	for _, k := range keys {
		v, ok, err := strMap(t, m1.node, "jobs").Get(ctx, k)
		if err != nil || !ok || v != "v-"+k {
			t.Fatalf("get %s = %q, %v, %v", k, v, ok, err)
		}
	}
}

// hazelcast.initial.min.cluster.size: members wait for that many before
// the master computes a table and the maps load; until then an
// operation waits (and fails at its deadline) saying so.
func TestClusterWaitsForInitialMinClusterSize(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, sharedConfig(t, dir, 1, 3))
	m1, m2 := tc.add(), tc.add()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	err := strMap(t, m2.node, "engine_jobs").Put(ctx, "k", "v")
	cancel()
	if err == nil || !strings.Contains(err.Error(), "waiting for 3 members") {
		t.Fatalf("put with 2 of 3 members: %v, want an error saying it waits for 3 members", err)
	}
	for _, m := range []*tmember{m1, m2} {
		if m.node.Loaded() {
			t.Fatalf("%s says loaded with 2 of the 3 members", m.id)
		}
	}
	tc.add()
	tc.waitLoaded()
	if err := strMap(t, m1.node, "engine_jobs").Put(context.Background(), "k", "v"); err != nil {
		t.Fatalf("put with 3 members: %v", err)
	}
}

// A persisted map with async backups only (backup-count 0): an async
// backup may lack acknowledged writes when the owner dies, so its copy is
// not what the new owner serves: it reads the map store, which has every
// acknowledged write. (Taking the copy would lose them, and the epoch
// started from it would drop them from the store at the next recovery.)
func TestClusterAsyncOnlyPromotionReadsTheStore(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, func() *config.Config {
		cfg := sharedConfig(t, dir, 0, 1)()
		for i := range cfg.Hazelcast.Maps {
			cfg.Hazelcast.Maps[i].AsyncBackupCount = 1
		}
		return cfg
	})
	m1, m2, m3 := tc.add(), tc.add(), tc.add()
	tc.waitLoaded()
	waitBalanced(t, tc)
	waitSafe(t, tc)
	const name = "engine_runningJobState"
	ctx := context.Background()
	var keys []string
	for i := 0; len(keys) < 40; i++ {
		k := fmt.Sprintf("s%d", i)
		rs := m1.node.Replicas(partition.Of([]byte(k), partition.DefaultCount))
		if len(rs) == 2 && rs[0] == m2.id && rs[1] == m3.id {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if err := strMap(t, m1.node, name).Put(ctx, k, "first"); err != nil {
			t.Fatal(err)
		}
	}
	waitSafe(t, tc)
	// From now on nothing m2 sends reaches its async backup m3.
	tc.net.SetHook(func(from, to, method string) error {
		if from == m2.id && to == m3.id && method != "lease" {
			return errors.New("lost")
		}
		return nil
	})
	for _, k := range keys {
		if err := strMap(t, m1.node, name).Put(ctx, k, "second"); err != nil {
			t.Fatal(err)
		}
	}
	tc.net.SetHook(nil)
	tc.kill(m2)
	tc.waitLoaded()
	for _, via := range []*tmember{m1, m3} {
		for _, k := range keys {
			v, ok, err := strMap(t, via.node, name).Get(ctx, k)
			if err != nil || !ok || v != "second" {
				t.Fatalf("%s via %s after the owner died: %q, %v, %v; the last acknowledged write is \"second\"", k, via.id, v, ok, err)
			}
		}
	}
}
