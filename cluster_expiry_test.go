package stowage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
)

// expiryConfig persists, in dir shared by every member, the engine*
// maps (EAGER, no map-level TTL), the lazy* maps (LAZY) and the ttl*
// maps (EAGER, time-to-live-seconds ttlSeconds), each with two sync
// backups, so that on three members every member holds every partition.
func expiryConfig(t testing.TB, dir string, ttlSeconds int) func() *config.Config {
	store := func(mode string) string {
		return `      map-store:
        enabled: true
        initial-mode: ` + mode + `
        properties:
          type: hdfs
          namespace: ` + dir + `
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
`
	}
	return func() *config.Config {
		y := "hazelcast:\n  cluster-name: test\n  properties:\n    hazelcast.initial.min.cluster.size: 3\n  map:\n" +
			"    engine*:\n      backup-count: 2\n" + store("EAGER") +
			"    lazy*:\n      backup-count: 2\n" + store("LAZY") +
			"    ttl*:\n      backup-count: 2\n      time-to-live-seconds: " + fmt.Sprint(ttlSeconds) + "\n" + store("EAGER")
		cfg, err := config.Parse(nil, []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
}

// held sums, over the live members, the entries of map name held in
// memory as owner and as backup, expired or not.
func held(tc *tcluster, name string) (owned, backups int) {
	for _, m := range tc.live() {
		for _, mi := range m.node.Maps() {
			if mi.Name == name {
				owned += mi.Size
				backups += mi.Backups
			}
		}
	}
	return owned, backups
}

// expiryKeys writes, through the members in turn: per map of maps,
// `dying` entries that expire and `kept` entries that do not (a
// PutWithTTL of ttl, or for a ttl* map a Put under its map TTL; kept
// entries by PutWithTTL(0), which never expires). It returns when the
// last write was acknowledged.
func expiryKeys(t *testing.T, tc *tcluster, maps []string, dying, kept int, ttl time.Duration) {
	ctx := context.Background()
	ms := tc.live()
	for _, name := range maps {
		for i := 0; i < dying+kept; i++ {
			m := strMap(t, ms[i%len(ms)].node, name)
			k := fmt.Sprintf("k%03d", i)
			var err error
			switch {
			case i >= dying:
				err = m.PutWithTTL(ctx, k, "kept", 0)
			case strings.HasPrefix(name, "ttl"):
				err = m.Put(ctx, k, "dies")
			default:
				err = m.PutWithTTL(ctx, k, "dies", ttl)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", name, k, err)
			}
		}
	}
}

// checkExpired checks through every live member that only the kept
// entries of each map are readable and counted.
func checkExpired(t *testing.T, tc *tcluster, maps []string, dying, kept int) {
	t.Helper()
	ctx := context.Background()
	for _, via := range tc.live() {
		for _, name := range maps {
			m := strMap(t, via.node, name)
			for i := 0; i < dying+kept; i++ {
				k := fmt.Sprintf("k%03d", i)
				v, ok, err := m.Get(ctx, k)
				if err != nil {
					t.Fatalf("%s %s via %s: %v", name, k, via.id, err)
				}
				if want := i >= dying; ok != want || ok && v != "kept" {
					t.Fatalf("%s %s via %s: found %v (%q), want found %v", name, k, via.id, ok, v, want)
				}
			}
			if n, err := m.Size(ctx); err != nil || n != kept {
				t.Fatalf("%s size via %s = %d, %v; want %d", name, via.id, n, err, kept)
			}
		}
	}
}

// Entries expire on their owner, which removes them with a replicated,
// stored delete: the owners' and the backups' copies both fall to the
// entries that do not expire (backups never drop an entry by their own
// clock, so their count falls only through the owner's removal). Per
// entry TTL (PutWithTTL) and the map's time-to-live-seconds both work.
func TestClusterEntriesExpireOnOwnerAndBackups(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, expiryConfig(t, dir, 2))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	const dying, kept = 60, 20
	const ttl = 2 * time.Second
	maps := []string{"engine_history", "ttl_jobs"}
	start := time.Now()
	expiryKeys(t, tc, maps, dying, kept, ttl)
	if time.Since(start) < ttl/2 {
		// Before the deadline every copy is there (skipped on a machine
		// too slow to write them in time: the point is what follows).
		for _, name := range maps {
			if o, b := held(tc, name); o != dying+kept || b != 2*(dying+kept) {
				t.Fatalf("%s before expiry: %d owned, %d backup copies; want %d and %d", name, o, b, dying+kept, 2*(dying+kept))
			}
		}
	}
	for _, name := range maps {
		waitUntil(t, func() bool {
			o, b := held(tc, name)
			return o == kept && b == 2*kept
		})
	}
	checkExpired(t, tc, maps, dying, kept)
	var removed float64
	for _, m := range tc.live() {
		removed += counter(t, m.node.Gatherer(), "stowage_map_expired_total")
	}
	if removed != 2*dying {
		t.Fatalf("stowage_map_expired_total sums to %v over the members, want %d", removed, 2*dying)
	}
}

// A full-cluster stop before the deadline and a restart after it bring
// no expired entry back, EAGER or LAZY: the deadline was stored with
// each entry, and the new owners remove what is dead from the store.
func TestClusterRestartAfterTTLBringsNoneBack(t *testing.T) {
	dir := t.TempDir()
	cfg := expiryConfig(t, dir, 2)
	tc := newTCluster(t, cfg)
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	const dying, kept = 60, 20
	const ttl = 2 * time.Second
	maps := []string{"engine_history", "lazy_history", "ttl_jobs"}
	expiryKeys(t, tc, maps, dying, kept, ttl)
	written := time.Now() // every deadline is before written+ttl
	for _, m := range tc.live() {
		tc.kill(m)
	}
	// The deadlines must pass while no member runs: no event marks
	// that, so the test lets the time go by.
	if d := time.Until(written.Add(ttl + 100*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	again := newTCluster(t, cfg)
	for i := 0; i < 3; i++ {
		again.add()
	}
	again.waitLoaded()
	checkExpired(t, again, maps, dying, kept)
	// The dead entries were loaded (the store had them) and are removed
	// by their owners, from memory, the backups and the store.
	for _, name := range maps {
		waitUntil(t, func() bool {
			o, b := held(again, name)
			return o == kept && b == 2*kept
		})
	}
	for _, m := range again.live() {
		again.kill(m)
	}
	third := newTCluster(t, cfg)
	for i := 0; i < 3; i++ {
		third.add()
	}
	third.waitLoaded()
	for _, name := range maps {
		if !strings.HasPrefix(name, "lazy") {
			if o, _ := held(third, name); o != kept {
				t.Fatalf("%s: a restart after the removal loaded %d entries, want %d", name, o, kept)
			}
		}
	}
	checkExpired(t, third, maps, dying, kept)
}

// Disk use falls once entries expire: the owner's deletes let compaction
// leave them out of the snapshots and delete the log files that held
// them.
func TestExpiredEntriesLeaveTheDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const seg = 256 << 10
	n := open(t, stowage.Options{Config: persisted(t, dir, "          block.size: "+fmt.Sprint(seg)+"\n"),
		ExpiryInterval: 100 * time.Millisecond})
	defer n.Close()
	m := strMap(t, n, "engine_finished")
	val := strings.Repeat("v", 200)
	const keys = 2000
	const ttl = 5 * time.Second
	start := time.Now()
	for k := 0; k < keys; k++ {
		if err := m.PutWithTTL(ctx, fmt.Sprintf("job-%05d", k), val, ttl); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < 10; k++ {
		if err := m.Put(ctx, fmt.Sprintf("kept-%d", k), "v"); err != nil {
			t.Fatal(err)
		}
	}
	mapDir := filepath.Join(dir, "test", "engine_finished")
	before := diskBytes(t, mapDir)
	if took := time.Since(start); took > ttl-time.Second {
		// The first entries may have expired and left the disk already:
		// the figure before would not be one.
		t.Skipf("writing took %v, too close to the %v TTL to measure the disk before expiry", took, ttl)
	}
	live := int64(keys * (len(val) + 9))
	if before < live {
		t.Fatalf("%d B on disk before expiry, less than the %d B written", before, live)
	}
	var after int64
	deadline := time.Now().Add(longStop)
	for after = diskBytes(t, mapDir); after >= before/10; after = diskBytes(t, mapDir) {
		if time.Now().After(deadline) {
			size, _ := m.Size(ctx)
			t.Fatalf("map store still %d B (%d B before expiry, %d entries live) after %v; files: %v", after, before, size, longStop, listFiles(mapDir))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("map store: %d B before expiry, %d B after", before, after)
	if size, err := m.Size(ctx); err != nil || size != 10 {
		t.Fatalf("size after expiry = %d, %v; want 10", size, err)
	}
}

// SetTTL changes the deadline of a live entry and keeps its value; an
// expired entry is absent at once to every read, before the owner's
// expiry loop removed it.
func TestSetTTL(t *testing.T) {
	ctx := context.Background()
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), ""), ExpiryInterval: time.Hour})
	defer n.Close()
	m := strMap(t, n, "engine_jobs")
	if err := m.PutWithTTL(ctx, "a", "1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "b", "2"); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.SetTTL(ctx, "a", 0); err != nil || !ok {
		t.Fatalf("SetTTL(a, 0) = %v, %v", ok, err)
	}
	if ok, err := m.SetTTL(ctx, "b", time.Millisecond); err != nil || !ok {
		t.Fatalf("SetTTL(b, 1ms) = %v, %v", ok, err)
	}
	if ok, err := m.SetTTL(ctx, "none", time.Second); err != nil || ok {
		t.Fatalf("SetTTL on a missing key = %v, %v; want false", ok, err)
	}
	waitUntil(t, func() bool {
		_, ok, err := m.Get(ctx, "b")
		return err == nil && !ok
	})
	if v, ok, err := m.Get(ctx, "a"); err != nil || !ok || v != "1" {
		t.Fatalf("a = %q, %v, %v after SetTTL(a, 0)", v, ok, err)
	}
	if _, loaded, err := m.PutIfAbsent(ctx, "b", "3"); err != nil || loaded {
		t.Fatalf("PutIfAbsent on an expired key: loaded %v, %v", loaded, err)
	}
	if n, err := m.Size(ctx); err != nil || n != 2 {
		t.Fatalf("size = %d, %v; want 2", n, err)
	}
}

// max-idle-seconds: an entry read within its idle time lives on; one
// left alone expires.
func TestMaxIdle(t *testing.T) {
	ctx := context.Background()
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), "      max-idle-seconds: 1\n"), ExpiryInterval: 50 * time.Millisecond})
	defer n.Close()
	m := strMap(t, n, "engine_idle")
	for _, k := range []string{"read", "idle"} {
		if err := m.Put(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for time.Since(start) < 2500*time.Millisecond {
		v, ok, err := m.Get(ctx, "read")
		if err != nil || !ok || v != "v" {
			t.Fatalf("an entry read every 100 ms expired after %v: %q, %v, %v", time.Since(start), v, ok, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, ok, err := m.Get(ctx, "idle"); err != nil || ok {
		t.Fatalf("an entry idle for 2.5 s with max-idle-seconds 1 is still there: %v, %v", ok, err)
	}
}

// The deadline travels with the entry to the backups: after the owner
// of every partition it held died (memory only, so the new owners have
// nothing but their backup copies), the promoted backups expire the
// entries by the deadlines they were sent.
func TestClusterExpiryAfterFailover(t *testing.T) {
	tc := newTCluster(t, memoryConfig(2, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	const dying, kept = 60, 20
	const ttl = 2 * time.Second
	maps := []string{"history"}
	expiryKeys(t, tc, maps, dying, kept, ttl)
	tc.kill(tc.live()[0])
	for _, name := range maps {
		waitUntil(t, func() bool {
			o, b := held(tc, name)
			return o == kept && b == kept
		})
	}
	checkExpired(t, tc, maps, dying, kept)
}

// Max idle after a fail-over: access times are the owner's alone (reads
// are not replicated), so the member taking a partition over starts every
// entry's idle period afresh; an entry read all along is not lost because
// its backup copy was last touched by the write.
func TestClusterMaxIdleAfterFailover(t *testing.T) {
	tc := newTCluster(t, func() *config.Config {
		cfg, err := config.Parse(nil, []byte("hazelcast:\n  cluster-name: t\n  map:\n    default:\n      backup-count: 1\n      max-idle-seconds: 1\n"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	})
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	owner := tc.live()[0]
	k := keyOwnedBy(t, owner)
	m := strMap(t, owner.node, "idle")
	if err := m.Put(ctx, k, "v"); err != nil {
		t.Fatal(err)
	}
	// Read on the owner for longer than the idle time: alive there.
	start := time.Now()
	for time.Since(start) < 1500*time.Millisecond {
		if _, ok, err := m.Get(ctx, k); err != nil || !ok {
			t.Fatalf("read every 100 ms, the entry expired on its owner after %v (%v)", time.Since(start), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tc.kill(owner)
	v, ok, err := strMap(t, tc.live()[0].node, "idle").Get(ctx, k)
	if err != nil || !ok || v != "v" {
		t.Fatalf("after the fail-over the entry read all along is %q, %v, %v", v, ok, err)
	}
}

// listFiles names the files under dir with their sizes.
func listFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				out = append(out, fmt.Sprintf("%s:%d", strings.TrimPrefix(p, dir), fi.Size()))
			}
		}
		return nil
	})
	return out
}
