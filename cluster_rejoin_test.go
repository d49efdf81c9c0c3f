package stowage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
)

// A member cut off from the others and back within the backup grace
// takes its replica slots again and is brought up to date by deltas of
// the map engine's partitions (overwrites, deletes and new keys of the
// time it was away), not whole copies; and then its copies are what the
// owners have: with the owner that holds the rest gone, every
// acknowledged write reads back from the copies it was given.
func TestClusterMemberBackWithinGraceGetsDeltas(t *testing.T) {
	// Split-brain protection: m3 alone publishes no table of its own
	// (without it, m3 would take every partition over on its side, and
	// the heal would be a merge of two histories).
	cfg := func() *config.Config {
		c, err := config.Parse(nil, []byte(`hazelcast:
  cluster-name: t
  split-brain-protection:
    two:
      enabled: true
      minimum-cluster-size: 2
  map:
    default:
      backup-count: 1
      split-brain-protection-ref: two
`))
		if err != nil {
			panic(err)
		}
		return c
	}
	tc := newTCluster(t, cfg)
	tc.grace = 2 * longStop
	m1, m2, m3 := tc.add(), tc.add(), tc.add()
	tc.waitLoaded()
	ctx := context.Background()
	m := strMap(t, m1.node, "jobs")
	const keys = 271 * 80 // enough per partition for a delta
	pad := strings.Repeat("x", 200)
	want := map[string]string{}
	var batch []stowage.Entry[string, string]
	for i := range keys {
		k := fmt.Sprintf("k%d", i)
		want[k] = "before" + pad
		batch = append(batch, stowage.Entry[string, string]{Key: k, Value: want[k]})
	}
	if err := m.PutAll(ctx, batch); err != nil {
		fatalDump(t, "put all: %v", err)
	}
	waitUntil(t, func() bool { return m1.node.Safe(ctx) })

	tc.net.Isolate(m3.id)
	tc.setView(m1, m1, m2)
	tc.setView(m2, m1, m2)
	tc.setView(m3, m3)
	waitUntil(t, func() bool {
		for _, rs := range m1.node.PartitionTable().Replicas {
			if slices.Contains(rs, m3.id) {
				return false
			}
		}
		return m1.node.Loaded() && m2.node.Loaded()
	})
	if len(m1.node.PartitionTable().Away) == 0 {
		t.Error("the table holds no slot for m3")
	}
	if m1.node.Safe(ctx) {
		t.Error("safe while m3's backup slots are held for it")
	}
	for i := 0; i < keys; i += 50 {
		k := fmt.Sprintf("k%d", i)
		if i%100 == 0 {
			if err := m.Delete(ctx, k); err != nil {
				fatalDump(t, "delete %s: %v", k, err)
			}
			delete(want, k)
			continue
		}
		want[k] = "during" + pad
		if err := m.Put(ctx, k, want[k]); err != nil {
			fatalDump(t, "put %s: %v", k, err)
		}
	}

	var sent atomic.Int64
	tc.net.SetMeter(func(from, to, _ string, request, answer int) {
		if to == m3.id {
			sent.Add(int64(request))
		}
		if from == m3.id {
			sent.Add(int64(answer))
		}
	})
	tc.net.HealAll()
	tc.publish()
	waitUntil(t, func() bool { return m1.node.Safe(ctx) && m1.node.Cluster(ctx).PartitionsPerMember[m3.id] > 0 })
	tc.net.SetMeter(nil)
	deltas := counter(t, m1.node.Gatherer(), "stowage_partition_deltas_total") + counter(t, m2.node.Gatherer(), "stowage_partition_deltas_total")
	// A whole copy of what m3 holds: two thirds of the data.
	whole := int64(keys) * int64(len("k00000")+len("before")+len(pad)) * 2 / 3
	t.Logf("m3 was sent %d bytes on its return (%.0f deltas); its copies weigh some %d bytes", sent.Load(), deltas, whole)
	if deltas == 0 || sent.Load()*4 > whole {
		t.Errorf("m3 was sent %d bytes in %.0f deltas, holding some %d: not brought up to date by deltas", sent.Load(), deltas, whole)
	}

	tc.kill(m1)
	waitUntil(t, func() bool { return m2.node.Loaded() && m3.node.Loaded() })
	m2m := strMap(t, m2.node, "jobs")
	bad := 0
	for i := range keys {
		k := fmt.Sprintf("k%d", i)
		v, ok, err := m2m.Get(ctx, k)
		w, wok := want[k]
		if err != nil || ok != wok || v != w {
			if bad++; bad <= 5 {
				t.Errorf("%s = %.10q, %v, %v; want %.10q, %v", k, v, ok, err, w, wok)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d keys wrong after m1 died", bad)
	}
}
