package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/partition"
)

// history remembers, per key, the last acknowledged value and every
// value whose write failed. A failed write may or may not take effect,
// and it may take effect later than its caller saw it fail (a request
// still on its way to the owner when the member that forwarded it
// died), so a later acknowledged write does not rule it out: what must
// never be read is an acknowledged value older than the last one.
type history struct {
	mapName  string // default "jobs"
	mu       sync.Mutex
	acked    map[string]string
	inflight map[string][]string
	acks     int
	// trail is each key's writes in the order they returned, for the
	// report of a key that lost its value.
	trail map[string][]string
	start time.Time
	// disrupted is when the disruption began and ended, since start.
	disrupted [2]time.Duration
	// tables are, per member, its partition table just before the
	// disruption and once the writes ended, for the report of a key that
	// lost its value.
	tables [2]map[string]stowage.PartitionTable
}

// snapTables notes every live member's partition table as tables[i].
func (h *history) snapTables(tc *tcluster, i int) {
	ts := map[string]stowage.PartitionTable{}
	for _, m := range tc.live() {
		ts[m.id] = m.node.PartitionTable()
	}
	h.mu.Lock()
	h.tables[i] = ts
	h.mu.Unlock()
}

// replicasOf says, per member, partition p's replicas in the tables
// noted around the disruption. h.mu held.
func (h *history) replicasOf(p int) string {
	var b strings.Builder
	for i, when := range []string{"before", "at the end"} {
		fmt.Fprintf(&b, " %s:", when)
		ids := make([]string, 0, len(h.tables[i]))
		for id := range h.tables[i] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			t := h.tables[i][id]
			if p < len(t.Replicas) {
				fmt.Fprintf(&b, " %s(v%d)=%v", id, t.Version, t.Replicas[p])
			}
		}
	}
	return b.String()
}

func newHistory() *history {
	return &history{acked: map[string]string{}, inflight: map[string][]string{},
		trail: map[string][]string{}, start: time.Now()}
}

// writers runs n writers through random live members until stop is
// closed; each writer owns its keys, so the last acknowledged value of
// each key is known.
func (h *history) writers(tc *tcluster, n, keys int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ms := tc.live()
				via := ms[rng.IntN(len(ms))]
				key := fmt.Sprintf("w%d-k%d", w, rng.IntN(keys))
				val := fmt.Sprintf("w%d-%d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				start := time.Now()
				m, err := stowage.GetMap(ctx, via.node, h.name(), strCodec, strCodec)
				if err == nil {
					err = m.Put(ctx, key, val)
				}
				cancel()
				if took := time.Since(start); took > 5*time.Second && os.Getenv("STOWAGE_TEST_DIAG") != "" {
					fmt.Fprintf(os.Stderr, "slow put %s via %s: %v: %v\n", key, via.id, took, err)
				}
				h.mu.Lock()
				if err == nil {
					h.acked[key] = val
					h.acks++
				} else {
					// Failed or unknown: the value may still take effect.
					h.inflight[key] = append(h.inflight[key], val)
				}
				h.note(key, val, via.id, start, err)
				h.mu.Unlock()
				if err != nil && errors.Is(err, stowage.ErrClosed) {
					time.Sleep(time.Millisecond) // the member went away under us
				}
			}
		}()
	}
	return &wg
}

// check reads every key through via and reports keys whose value is
// neither the last acknowledged one nor one written after it.
func (h *history) check(t *testing.T, via *tmember) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	m, err := stowage.GetMap(ctx, via.node, h.name(), strCodec, strCodec)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	bad := 0
	for k, want := range h.acked {
		got, ok, err := m.Get(ctx, k)
		if err != nil {
			t.Fatalf("get %s via %s: %v", k, via.id, err)
		}
		good := ok && got == want
		for _, v := range h.inflight[k] {
			good = good || ok && got == v
		}
		if !good {
			bad++
			if bad <= 5 {
				p := partition.Of([]byte(k), partition.DefaultCount)
				t.Errorf("%s (partition %d) = %q (present %v), last acknowledged %q, failed %q; its writes: %s; its replicas:%s", k, p, got, ok, want, h.inflight[k], strings.Join(h.trail[k], "; "), h.replicasOf(p))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d keys lost their acknowledged value (disrupted %s..%s)", bad, len(h.acked),
			h.disrupted[0].Round(time.Microsecond), h.disrupted[1].Round(time.Microsecond))
	}
}

// run writes for a while, does something to the cluster, writes on, and
// checks every acknowledged write.
func failoverScenario(t *testing.T, tc *tcluster, disrupt func()) *history {
	return failoverOn(t, tc, newHistory(), disrupt)
}

func failoverOn(t *testing.T, tc *tcluster, h *history, disrupt func()) *history {
	stop := make(chan struct{})
	wg := h.writers(tc, 8, 40, stop)
	waitAcks(t, h, 200)
	// Backups filled everywhere (Hazelcast's cluster-safe state): losing
	// backup-count members now must lose nothing.
	waitSafe(t, tc)
	h.snapTables(tc, 0)
	began := time.Since(h.start)
	disrupt()
	h.mu.Lock()
	h.disrupted = [2]time.Duration{began, time.Since(h.start)}
	h.mu.Unlock()
	tc.waitLoaded()
	before := h.count()
	waitAcks(t, h, before+200)
	close(stop)
	wg.Wait()
	h.snapTables(tc, 1)
	h.check(t, tc.live()[0])
	h.check(t, tc.live()[len(tc.live())-1])
	return h
}

// note adds a write that returned to key's trail. h.mu held.
func (h *history) note(key, val, via string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "failed: " + err.Error()
	}
	h.trail[key] = append(h.trail[key], fmt.Sprintf("%s via %s %s..%s %s", val, via,
		start.Sub(h.start).Round(time.Microsecond), time.Since(h.start).Round(time.Microsecond), outcome))
}

func (h *history) name() string {
	if h.mapName == "" {
		return "jobs"
	}
	return h.mapName
}

func (h *history) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acks
}

// waitAcks waits until n writes were acknowledged.
func waitAcks(t *testing.T, h *history, n int) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for h.count() < n {
		if time.Now().After(deadline) {
			fatalDump(t, "only %d of %d writes acknowledged within %s", h.count(), n, longStop)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A member dies: its partitions are promoted on their backups and no
// acknowledged write is lost; writes go on.
func TestClusterOwnerDies(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	failoverScenario(t, tc, func() { tc.kill(tc.live()[1]) })
}

// The master dies: the next oldest member continues the table.
func TestClusterMasterDies(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	before := tc.live()[1].node.Cluster(context.Background()).PartitionTableVer
	failoverScenario(t, tc, func() { tc.kill(tc.live()[0]) })
	for _, m := range tc.live() {
		if ci := m.node.Cluster(context.Background()); ci.Master != tc.live()[0].id || ci.PartitionTableVer <= before {
			t.Errorf("%s: master %s, table version %d (was %d before the master died)", m.id, ci.Master, ci.PartitionTableVer, before)
		}
	}
}

// Members join under load: partitions migrate without losing or
// reordering acknowledged writes.
func TestClusterJoinUnderLoad(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	tc.add()
	tc.add()
	tc.waitLoaded()
	failoverScenario(t, tc, func() { tc.add(); tc.add() })
	counts := map[string]int{}
	for _, m := range tc.live() {
		ci := m.node.Cluster(context.Background())
		counts = ci.PartitionsPerMember
	}
	if len(counts) != 4 {
		t.Fatalf("partitions per member %v, want 4 owners", counts)
	}
}

// Two sync backups: losing two members at once loses nothing.
func TestClusterTwoBackupsTwoDie(t *testing.T) {
	tc := newTCluster(t, memoryConfig(2, 0))
	for i := 0; i < 4; i++ {
		tc.add()
	}
	tc.waitLoaded()
	failoverScenario(t, tc, func() {
		ms := tc.live()
		ms[1].tr.Close()
		ms[2].tr.Close()
		ms[1].node.Close()
		ms[2].node.Close()
		tc.drop(ms[1])
		tc.drop(ms[2])
	})
}

// waitSafe waits until every live member finds the cluster safe: loaded,
// one table, every backup filled.
func waitSafe(t *testing.T, tc *tcluster) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		why := ""
		for _, m := range tc.live() {
			if w := m.node.SafeWhy(); w != "" {
				why = m.id + ": " + w
				break
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			fatalDump(t, "cluster not safe within %s: %s", longStop, why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitBalanced waits until every live member has installed the same
// table and that table spreads owners (at most one apart) and backups (at
// most two apart: the master's last moves may leave that) evenly: the
// master has finished rebalancing for the current members.
func waitBalanced(t *testing.T, tc *tcluster) {
	t.Helper()
	spread := func(m map[string]int, ids []string) int {
		lo, hi := -1, 0
		for _, id := range ids {
			n := m[id]
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
		return hi - lo
	}
	deadline := time.Now().Add(longStop)
	for {
		ms := tc.live()
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.id
		}
		ci := ms[0].node.Cluster(context.Background())
		ok := spread(ci.PartitionsPerMember, ids) <= 1 && spread(ci.BackupsPerMember, ids) <= 2
		for _, m := range ms[1:] {
			ok = ok && m.node.Cluster(context.Background()).PartitionTableVer == ci.PartitionTableVer
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			fatalDump(t, "table not balanced within %s: version %d, owners %v, backups %v", longStop, ci.PartitionTableVer, ci.PartitionsPerMember, ci.BackupsPerMember)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A member whose process is gone (its transport refuses connections) is
// taken over before failure detection says so: here the others' views
// never drop it, and its partitions still move.
func TestClusterRefusedMemberTakenOver(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	failoverScenario(t, tc, func() {
		gone := tc.live()[1]
		gone.tr.Close() // nothing listens at its address any more
		gone.node.Close()
		tc.mu.Lock()
		tc.members = slices.DeleteFunc(tc.members, func(m *tmember) bool { return m == gone })
		tc.mu.Unlock()
		// The views are not told: failure detection has not caught up.
	})
}

// A member that hangs (its process stopped, or its host): nothing refuses
// its connections, calls to it just wait. Partitions it holds no replica
// of keep taking writes meanwhile; once failure detection drops it, the
// writes that were waiting for its backup acknowledgement complete
// without it, and writes to its partitions go to the promoted backups,
// all long before the operation timeout (a minute here).
func TestClusterHungMemberContained(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 4; i++ {
		tc.add()
	}
	tc.waitLoaded()
	// The replica sets are read once below: the master must be done
	// moving backups to the new members first.
	waitBalanced(t, tc)
	waitSafe(t, tc)
	ms := tc.live()
	victim, others := ms[3], ms[:3]
	keyOf := map[int]string{}
	for i := 0; len(keyOf) < partition.DefaultCount; i++ {
		k := fmt.Sprintf("hung-%d", i)
		p := partition.Of([]byte(k), partition.DefaultCount)
		if _, ok := keyOf[p]; !ok {
			keyOf[p] = k
		}
	}
	put := func(via *tmember, k, v string, limit time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		m, err := stowage.GetMap(ctx, via.node, "jobs", strCodec, strCodec)
		if err != nil {
			return err
		}
		return m.Put(ctx, k, v)
	}
	var with, without []int
	owners := map[int]string{}
	for p := range partition.DefaultCount {
		owners[p] = ms[0].node.Owner(p)
		if slices.Contains(ms[0].node.Replicas(p), victim.id) {
			with = append(with, p)
		} else {
			without = append(without, p)
		}
	}
	if len(with) == 0 || len(without) == 0 {
		t.Fatalf("replica sets: %d partitions with %s, %d without", len(with), victim.id, len(without))
	}

	tc.net.Freeze(victim.id)
	t.Cleanup(func() { tc.net.Thaw(victim.id) }) // runs before the members close
	// Writes that need the hung member wait for it (no answer, no
	// refusal): started now, they are in flight when it is dropped.
	type result struct {
		p   int
		err error
	}
	pending := make(chan result, len(with))
	for i, p := range with {
		limit := 20 * time.Second
		if owners[p] == victim.id {
			limit = 3 * time.Second // forwarded to the hung owner: no answer
		}
		go func() {
			pending <- result{p, put(others[i%3], keyOf[p], "during", limit)}
		}()
	}
	// Meanwhile the partitions it has no replica of are not held up.
	for i, p := range without {
		if err := put(others[i%3], keyOf[p], "contained", 10*time.Second); err != nil {
			t.Errorf("partition %d (replicas %v) while %s hangs: %v", p, ms[0].node.Replicas(p), victim.id, err)
		}
	}
	tc.drop(victim) // failure detection declares it dead
	failed := map[int]error{}
	for range with {
		r := <-pending
		if r.err != nil {
			failed[r.p] = r.err
		}
	}
	// A write whose owner was the hung member may have failed (its
	// outcome is unknown); one that only waited for its backup must not.
	waitedForBackup := 0
	for _, p := range with {
		if owners[p] == victim.id {
			continue
		}
		waitedForBackup++
		if err := failed[p]; err != nil {
			t.Errorf("partition %d (owner %s, backup %s): the write waiting for the hung backup failed: %v", p, owners[p], victim.id, err)
		}
	}
	if waitedForBackup == 0 {
		t.Fatalf("no partition has %s as its backup only", victim.id)
	}
	for i, p := range with {
		if err := put(others[i%3], keyOf[p], "after", 20*time.Second); err != nil {
			t.Errorf("partition %d after %s was dropped: %v", p, victim.id, err)
		}
	}
	m, err := stowage.GetMap(context.Background(), others[0].node, "jobs", strCodec, strCodec)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range with {
		if v, ok, err := m.Get(context.Background(), keyOf[p]); err != nil || !ok || v != "after" {
			t.Errorf("partition %d: %q %v %v, want \"after\"", p, v, ok, err)
		}
	}
	for _, p := range without {
		if v, ok, err := m.Get(context.Background(), keyOf[p]); err != nil || !ok || v != "contained" {
			t.Errorf("partition %d: %q %v %v, want \"contained\"", p, v, ok, err)
		}
	}
}

// A member that closes while one of its writes waits for an answer that
// hangs (a backup's, or the owner's it forwarded the write to) ends that
// write with ErrClosed: its Close leaves no write waiting out its timeout
// (the member's transport is the test's here and stays open, so only the
// close can end the wait).
func TestClusterCloseEndsWriteWaitingForAnswer(t *testing.T) {
	for _, forwarded := range []bool{false, true} {
		t.Run(fmt.Sprintf("forwarded=%v", forwarded), func(t *testing.T) {
			tc := newTCluster(t, memoryConfig(1, 0))
			m1, m2 := tc.add(), tc.add()
			tc.waitLoaded()
			key := keyOwnedBy(t, m1)
			if forwarded {
				key = keyOwnedBy(t, m2)
			}
			ctx, cancel := context.WithTimeout(context.Background(), longStop)
			defer cancel()
			if err := strMap(t, m1.node, "jobs").Put(ctx, key, "before"); err != nil {
				t.Fatal(err)
			}
			tc.net.Freeze(m2.id)
			defer tc.net.Thaw(m2.id)
			done := make(chan error, 1)
			go func() { done <- strMap(t, m1.node, "jobs").Put(ctx, key, "after") }()
			time.Sleep(200 * time.Millisecond) // the put waits for m2 by then (it cannot finish)
			select {
			case err := <-done:
				t.Fatalf("put finished while m2 hung: %v", err)
			default:
			}
			m1.node.Close()
			if err := <-done; !errors.Is(err, stowage.ErrClosed) {
				t.Fatalf("put on a member that closed: %v, want ErrClosed", err)
			}
		})
	}
}

// A member dies while partitions migrate to a member that just joined:
// the new owner takes a partition over from the old one, which stays as
// its backup while the other backup leaves the set, and the old owner
// dies before the hand-over. The backup that left has every write (its
// epoch's owner lost the ownership when it left) and is the source: no
// acknowledged write is lost, in memory or written through.
func TestClusterOwnerDiesDuringRebalance(t *testing.T) {
	for _, persisted := range []bool{false, true} {
		t.Run(fmt.Sprintf("persisted=%v", persisted), func(t *testing.T) {
			cfg, h := memoryConfig(1, 0), newHistory()
			if persisted {
				cfg = sharedConfig(t, t.TempDir(), 1, 1)
				h.mapName = "engine_runningJobState"
			}
			tc := newTCluster(t, cfg)
			tc.add()
			tc.add()
			tc.waitLoaded()
			failoverOn(t, tc, h, func() {
				m2 := tc.live()[1]
				tc.add()
				tc.kill(m2)
			})
		})
	}
}
