package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/partition"
)

// behindConfig persists engine* maps in dir, shared by every member,
// written behind with the given delay (seconds), one backup.
func behindConfig(t testing.TB, dir string, delay int) func() *config.Config {
	return func() *config.Config {
		y := fmt.Sprintf(`hazelcast:
  cluster-name: test
  map:
    engine*:
      backup-count: 1
      map-store:
        enabled: true
        initial-mode: EAGER
        write-delay-seconds: %d
        write-batch-size: 50
        write-coalescing: true
        properties:
          type: hdfs
          namespace: %s
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
`, delay, dir)
		cfg, err := config.Parse(nil, []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
}

// deadStorage gives each member a switch that, armed, fails every call
// that would change its map stores' files (a close still closes, as the
// kernel closes a killed process's files): a member whose switch is armed
// and that is then closed stores nothing more, as if it had been killed.
type deadStorage struct {
	mu       sync.Mutex
	switches map[string]*errorfs.Switch
}

func (d *deadStorage) openFS(id string) func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.switches == nil {
		d.switches = map[string]*errorfs.Switch{}
	}
	sw := errorfs.NewSwitch(errorfs.OnOps(errorfs.Fail(), errorfs.OpCreate, errorfs.OpWrite, errorfs.OpSync,
		errorfs.OpTruncate, errorfs.OpRemove, errorfs.OpRemoveAll, errorfs.OpRename))
	d.switches[id] = sw
	return func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, sw), nil
	}
}

// crash cuts m off its storage, then closes it without a hand-over: what
// it had queued is lost with it.
func (d *deadStorage) crash(tc *tcluster, m *tmember) {
	d.mu.Lock()
	sw := d.switches[m.id]
	d.mu.Unlock()
	sw.Arm()
	tc.kill(m)
}

// behindWrites writes n values over keys keys through the live members in
// turn and returns the last value of each key; every write must be
// acknowledged.
func behindWrites(t *testing.T, tc *tcluster, name string, n, keys int) map[string]string {
	t.Helper()
	ctx := context.Background()
	acked := map[string]string{}
	for i := range n {
		ms := tc.live()
		m, err := stowage.GetMap(ctx, ms[i%len(ms)].node, name, strCodec, strCodec)
		if err != nil {
			t.Fatal(err)
		}
		k, v := fmt.Sprintf("job-%d", i%keys), fmt.Sprintf("v%d", i)
		if err := m.Put(ctx, k, v); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
		acked[k] = v
	}
	return acked
}

// checkStored starts a new cluster of one member on dir and checks that
// it loads every acknowledged value from the store.
func checkStored(t *testing.T, cfg func() *config.Config, name string, acked map[string]string) {
	t.Helper()
	again := newTCluster(t, cfg)
	again.add()
	again.waitLoaded()
	ctx := context.Background()
	m, err := stowage.GetMap(ctx, again.live()[0].node, name, strCodec, strCodec)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for k, want := range acked {
		got, ok, err := m.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || got != want {
			lost++
			if lost <= 5 {
				t.Errorf("%s (partition %d) = %q (present %v) in the store, acknowledged %q", k, partition.Of([]byte(k), partition.DefaultCount), got, ok, want)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("the store lacks %d of %d acknowledged values", lost, len(acked))
	}
}

// Write-behind: the owner of a partition dies before its queue was
// stored (the delay is a minute); its backups kept the pending keys, the
// new owners store them, and the store ends with every acknowledged
// value.
func TestClusterWriteBehindFailoverKeepsPending(t *testing.T) {
	dir := t.TempDir()
	cfg := behindConfig(t, dir, 60)
	tc := newTCluster(t, cfg)
	var ds deadStorage
	tc.openFS = ds.openFS
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	waitSafe(t, tc)
	const name = "engine_runningJobState"
	acked := behindWrites(t, tc, name, 600, 200)
	victim := tc.live()[1]
	owned := 0
	for k := range acked {
		if victim.node.Owner(partition.Of([]byte(k), partition.DefaultCount)) == victim.id {
			owned++
		}
	}
	if owned == 0 {
		t.Fatal("the member to kill owns none of the keys")
	}
	ds.crash(tc, victim)
	waitNotOwner(t, tc, victim.id)
	tc.waitLoaded()
	waitSafe(t, tc)
	// The new owners store the keys they took over pending; Flush stores
	// the rest (the survivors' own queues) without waiting a minute.
	if err := tc.live()[0].node.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The owners told the backups what they stored: no copy keeps a key
	// unstored.
	waitAllStored(t, tc, name)
	for _, m := range tc.live() {
		ds.crash(tc, m)
	}
	checkStored(t, cfg, name, acked)
	t.Logf("%d of %d keys were owned by the member that died with its queue", owned, len(acked))
}

// waitNotOwner waits until no live member's table names id the owner of
// a partition (the take-overs of a dead member have begun everywhere).
func waitNotOwner(t *testing.T, tc *tcluster, id string) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		named := false
		for _, m := range tc.live() {
			for p := range partition.DefaultCount {
				if m.node.Owner(p) == id {
					named = true
				}
			}
		}
		if !named {
			return
		}
		if time.Now().After(deadline) {
			fatalDump(t, "%s still owns partitions after %s", id, longStop)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAllStored waits until no live member has a queued record or a key
// it has not seen stored in the named map.
func waitAllStored(t *testing.T, tc *tcluster, name string) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		why := ""
		for _, m := range tc.live() {
			if mi, ok := m.node.MapInfo(name); ok && (mi.WriteBehindQueued > 0 || mi.UnstoredKeys > 0) {
				why = fmt.Sprintf("%s: %d queued, %d keys not seen stored", m.id, mi.WriteBehindQueued, mi.UnstoredKeys)
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a Flush, for %s: %s", longStop, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A graceful Leave, and a Close, store what the member queued: with a
// delay of a minute, members leaving one by one lose nothing.
func TestClusterWriteBehindLeaveAndCloseStore(t *testing.T) {
	dir := t.TempDir()
	cfg := behindConfig(t, dir, 60)
	tc := newTCluster(t, cfg)
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	waitSafe(t, tc)
	const name = "engine_runningJobInfo"
	acked := behindWrites(t, tc, name, 400, 150)
	ctx := context.Background()
	first := tc.live()[0]
	if err := first.node.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	first.tr.Close()
	tc.drop(first)
	tc.waitLoaded()
	for _, m := range tc.live() {
		if err := m.node.Close(); err != nil {
			t.Fatal(err)
		}
		tc.kill(m)
	}
	checkStored(t, cfg, name, acked)
}

// behindNodeConfig is a member alone whose engine* maps are written
// behind (delay a minute) under dir, with the given hazelcast properties
// block lines.
func behindNodeConfig(t *testing.T, dir, props string) *config.Config {
	t.Helper()
	y := `hazelcast:
  cluster-name: test
  properties:
` + props + `  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        write-delay-seconds: 60
        properties:
          type: hdfs
          namespace: ` + dir + `
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
`
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// hazelcast.map.write.behind.queue.capacity bounds a map's queue: a write
// beyond it fails with ErrQueueFull and changes nothing; a value that is
// not a count is refused naming the property.
func TestWriteBehindQueueCapacityProperty(t *testing.T) {
	ctx := context.Background()
	n := open(t, stowage.Options{Config: behindNodeConfig(t, t.TempDir(), "    hazelcast.map.write.behind.queue.capacity: 2\n")})
	defer n.Close()
	m := strMap(t, n, "engine_jobs")
	for _, k := range []string{"a", "b"} {
		if err := m.Put(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Put(ctx, "c", "v"); !errors.Is(err, stowage.ErrQueueFull) {
		t.Fatalf("a third write with capacity 2: %v, want ErrQueueFull", err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "c", "v"); err != nil {
		t.Fatalf("a write after Flush: %v", err)
	}

	bad := behindNodeConfig(t, t.TempDir(), "    hazelcast.map.write.behind.queue.capacity: lots\n")
	nb, err := stowage.Open(ctx, stowage.Options{Config: bad})
	if err == nil {
		_, err = stowage.GetMap(ctx, nb, "engine_jobs", strCodec, strCodec)
		nb.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "hazelcast.map.write.behind.queue.capacity") {
		t.Fatalf("a capacity of %q: %v, want an error naming the property", "lots", err)
	}
}
