package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/partition"
	"github.com/stowage/stowage/serde"
)

// lockCluster starts three in-process members, each partition with one
// sync backup.
func lockCluster(t *testing.T) *tcluster {
	tc := newTCluster(t, memoryConfig(1, 0))
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	return tc
}

// keyNotOwnedBy returns a key whose partition none of ms owns.
func keyNotOwnedBy(t *testing.T, via *tmember, ms ...*tmember) string {
	t.Helper()
	for i := range 100000 {
		k := fmt.Sprintf("key-%d", i)
		o := via.node.Owner(partition.Of([]byte(k), partition.DefaultCount))
		ok := o != ""
		for _, m := range ms {
			ok = ok && o != m.id
		}
		if ok {
			return k
		}
	}
	t.Fatal("no key found")
	return ""
}

func TestLockTryLockTimeoutAndReentrancy(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	a := stowage.WithLockOwner(context.Background(), "A")
	b := stowage.WithLockOwner(context.Background(), "B")
	ma, mb := strMap(t, ms[0].node, "jobs"), strMap(t, ms[1].node, "jobs")
	k := keyNotOwnedBy(t, ms[0], ms[0], ms[1])

	if _, err := ma.Lock(context.Background(), k, 0); !errors.Is(err, stowage.ErrNoLockOwner) {
		t.Fatalf("Lock without an owner: %v, want ErrNoLockOwner", err)
	}
	t1, err := ma.Lock(a, k, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t2, ok, err := ma.TryLock(a, k, 0, time.Minute) // reentrant
	if err != nil || !ok {
		t.Fatalf("reentrant TryLock: %v, %v", ok, err)
	}
	if !t1.Less(t2) {
		t.Fatalf("reentrant token %v not above %v", t2, t1)
	}
	if _, ok, err := mb.TryLock(b, k, 50*time.Millisecond, time.Minute); err != nil || ok {
		t.Fatalf("TryLock of a held lock by another owner: %v, %v; want a timeout", ok, err)
	}
	if err := mb.Unlock(b, k); !errors.Is(err, stowage.ErrNotLockHolder) {
		t.Fatalf("Unlock by a non-holder: %v", err)
	}
	if err := ma.Unlock(a, k); err != nil {
		t.Fatal(err)
	}
	// One hold left.
	if locked, err := mb.IsLocked(b, k); err != nil || !locked {
		t.Fatalf("IsLocked after one of two unlocks: %v, %v", locked, err)
	}
	if _, ok, _ := mb.TryLock(b, k, 0, time.Minute); ok {
		t.Fatal("TryLock succeeded while one hold was left")
	}
	if err := ma.Unlock(a, k); err != nil {
		t.Fatal(err)
	}
	if err := ma.Unlock(a, k); !errors.Is(err, stowage.ErrNotLockHolder) {
		t.Fatalf("third Unlock: %v, want ErrNotLockHolder", err)
	}
	t3, ok, err := mb.TryLock(b, k, 0, time.Minute)
	if err != nil || !ok || !t2.Less(t3) {
		t.Fatalf("TryLock of a free lock: %v, %v, token %v after %v", ok, err, t3, t2)
	}
	if err := ma.ForceUnlock(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if locked, err := ma.IsLocked(context.Background(), k); err != nil || locked {
		t.Fatalf("IsLocked after ForceUnlock: %v, %v", locked, err)
	}
}

func TestLockLeaseExpires(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	a := stowage.WithLockOwner(context.Background(), "A")
	b := stowage.WithLockOwner(context.Background(), "B")
	ma, mb := strMap(t, ms[0].node, "jobs"), strMap(t, ms[2].node, "jobs")
	k := keyNotOwnedBy(t, ms[0], ms[0])
	leased := time.Now()
	t1, err := ma.Lock(a, k, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b, longStop)
	defer cancel()
	// A write by another owner waits for the end of the lease, then goes
	// (not only once the owner's sweep, every 10 s, cleared the lock).
	wctx, wcancel := context.WithTimeout(b, 5*time.Second)
	defer wcancel()
	if err := mb.Put(wctx, k, "after the lease"); err != nil {
		t.Fatalf("write after the holder's lease ended: %v", err)
	}
	if time.Now().Before(leased.Add(200 * time.Millisecond)) {
		t.Fatal("a write by another owner went through before the lease ended")
	}
	t2, err := mb.Lock(ctx, k, time.Minute)
	if err != nil {
		t.Fatalf("Lock after the holder's lease ended: %v", err)
	}
	if !t1.Less(t2) {
		t.Fatalf("token %v not above %v", t2, t1)
	}
	if err := ma.Unlock(a, k); !errors.Is(err, stowage.ErrNotLockHolder) {
		t.Fatalf("Unlock after the lease ended: %v, want ErrNotLockHolder", err)
	}
	if err := mb.Unlock(b, k); err != nil {
		t.Fatal(err)
	}
}

func TestLockWritesByOthersWait(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	a := stowage.WithLockOwner(context.Background(), "A")
	ma, mo := strMap(t, ms[0].node, "jobs"), strMap(t, ms[1].node, "jobs")
	k := keyNotOwnedBy(t, ms[0], ms[0], ms[1])
	if err := mo.Put(context.Background(), k, "before"); err != nil {
		t.Fatal(err)
	}
	if _, err := ma.Lock(a, k, time.Minute); err != nil {
		t.Fatal(err)
	}
	// A write by another caller with a short deadline gives up.
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := mo.Put(short, k, "impatient")
	cancel()
	if err == nil {
		t.Fatal("a write by another caller went through a held lock")
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), longStop)
		defer cancel()
		done <- mo.Put(ctx, k, "other")
	}()
	// The holder's own writes pass.
	if err := ma.Put(a, k, "holder"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ma.Compute(a, k, func(old string, _ bool) (string, bool) { return old + "+", true }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("a write by another caller finished while the lock was held: %v", err)
	default:
	}
	if v, _, err := mo.Get(context.Background(), k); err != nil || v != "holder+" {
		t.Fatalf("value while locked = %q, %v; want the holder's", v, err)
	}
	if err := ma.Unlock(a, k); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting write after unlock: %v", err)
	}
	if v, _, err := mo.Get(context.Background(), k); err != nil || v != "other" {
		t.Fatalf("value after unlock = %q, %v; want the waiting write's", v, err)
	}
}

func TestLockFencingTokensIncrease(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	var last stowage.FencingToken
	for i := range 30 {
		ctx := stowage.WithLockOwner(context.Background(), fmt.Sprint("o", i))
		m := strMap(t, ms[i%3].node, "jobs")
		tok, err := m.Lock(ctx, "k", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !last.Less(tok) {
			t.Fatalf("acquisition %d: token %v not above %v", i, tok, last)
		}
		last = tok
		if err := m.Unlock(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
}

// The owner of a locked key dies: its backup takes the partition over
// with the lock, which stays held by its holder; the next token is
// higher.
func TestLockSurvivesOwnerFailover(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	k := keyOwnedBy(t, ms[2])
	a := stowage.WithLockOwner(context.Background(), "A")
	b := stowage.WithLockOwner(context.Background(), "B")
	ma, mb := strMap(t, ms[0].node, "jobs"), strMap(t, ms[1].node, "jobs")
	t1, err := ma.Lock(a, k, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tc.kill(ms[2])
	p := partition.Of([]byte(k), partition.DefaultCount)
	waitUntil(t, func() bool { o := ms[0].node.Owner(p); return o != "" && o != ms[2].id })
	tc.waitLoaded()
	if locked, err := mb.IsLocked(b, k); err != nil || !locked {
		t.Fatalf("IsLocked after fail-over: %v, %v", locked, err)
	}
	if _, ok, err := mb.TryLock(b, k, 0, time.Minute); err != nil || ok {
		t.Fatalf("another owner's TryLock after fail-over: %v, %v", ok, err)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	if err := mb.Put(short, k, "x"); err == nil {
		t.Fatal("a write by another caller went through the lock after fail-over")
	}
	cancel()
	t2, ok, err := ma.TryLock(a, k, 0, time.Hour)
	if err != nil || !ok || !t1.Less(t2) {
		t.Fatalf("holder's reentrant TryLock after fail-over: %v, %v, token %v after %v", ok, err, t2, t1)
	}
	for range 2 {
		if err := ma.Unlock(a, k); err != nil {
			t.Fatal(err)
		}
	}
	t3, ok, err := mb.TryLock(b, k, 0, time.Minute)
	if err != nil || !ok || !t2.Less(t3) {
		t.Fatalf("TryLock after unlock: %v, %v, token %v after %v", ok, err, t3, t2)
	}
}

// A member joins and partitions migrate to it: the locks move with their
// partitions and stay held.
func TestLockSurvivesMigration(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	a := stowage.WithLockOwner(context.Background(), "A")
	b := stowage.WithLockOwner(context.Background(), "B")
	ma := strMap(t, ms[0].node, "jobs")
	const keys = 60
	for i := range keys {
		if _, err := ma.Lock(a, fmt.Sprint("k", i), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	m4 := tc.add()
	waitBalanced(t, tc)
	tc.waitLoaded()
	mb := strMap(t, m4.node, "jobs")
	moved := 0
	for i := range keys {
		k := fmt.Sprint("k", i)
		if m4.node.Owner(partition.Of([]byte(k), partition.DefaultCount)) == m4.id {
			moved++
		}
		if _, ok, err := mb.TryLock(b, k, 0, time.Minute); err != nil || ok {
			t.Fatalf("%s: another owner's TryLock after migration: %v, %v", k, ok, err)
		}
	}
	if moved == 0 {
		t.Fatal("no locked key moved to the new member")
	}
	for i := range keys {
		if err := ma.Unlock(a, fmt.Sprint("k", i)); err != nil {
			t.Fatalf("k%d: %v", i, err)
		}
	}
}

// The member a holder called through dies: its locks are released long
// before their lease ends.
func TestLockOfDeadMemberReleased(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	k := keyNotOwnedBy(t, ms[0], ms[2])
	a := stowage.WithLockOwner(context.Background(), "A")
	b := stowage.WithLockOwner(context.Background(), "B")
	if _, err := strMap(t, ms[2].node, "jobs").Lock(a, k, time.Hour); err != nil {
		t.Fatal(err)
	}
	mb := strMap(t, ms[0].node, "jobs")
	if _, ok, err := mb.TryLock(b, k, 0, time.Minute); err != nil || ok {
		t.Fatalf("TryLock while the holder's member lives: %v, %v", ok, err)
	}
	tc.kill(ms[2])
	ctx, cancel := context.WithTimeout(b, longStop)
	defer cancel()
	if _, err := mb.Lock(ctx, k, time.Minute); err != nil {
		t.Fatalf("Lock after the holder's member died: %v", err)
	}
}

// Many holders contend for a few keys through two members while the
// member owning the keys dies: no two holders ever hold one key at once,
// and each acquisition's token is above the previous one's.
func TestLockMutualExclusionAcrossFailover(t *testing.T) {
	tc := lockCluster(t)
	ms := tc.live()
	var keys []string
	for i := 0; len(keys) < 3; i++ {
		k := fmt.Sprintf("hot-%d", i)
		if ms[0].node.Owner(partition.Of([]byte(k), partition.DefaultCount)) == ms[2].id {
			keys = append(keys, k)
		}
	}
	type guard struct {
		mu     sync.Mutex
		holder string
		last   stowage.FencingToken
		n      int
	}
	guards := map[string]*guard{}
	for _, k := range keys {
		guards[k] = &guard{}
	}
	var violations atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			owner := fmt.Sprint("w", w)
			ctx := stowage.WithLockOwner(context.Background(), owner)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			m := strMap(t, ms[w%2].node, "jobs")
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[rng.IntN(len(keys))]
				cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				tok, ok, err := m.TryLock(cctx, k, 2*time.Second, 10*time.Second)
				cancel()
				if err != nil {
					// The outcome is unknown: drop any hold it may have
					// taken.
					for range 3 {
						if m.Unlock(ctx, k) != nil {
							break
						}
					}
					continue
				}
				if !ok {
					continue
				}
				g := guards[k]
				g.mu.Lock()
				if g.holder != "" {
					violations.Add(1)
					t.Errorf("%s: %s acquired while %s holds it", k, owner, g.holder)
				}
				if !g.last.Less(tok) {
					violations.Add(1)
					t.Errorf("%s: token %v not above the previous %v", k, tok, g.last)
				}
				g.holder, g.last = owner, tok
				g.n++
				g.mu.Unlock()
				time.Sleep(time.Millisecond)
				g.mu.Lock()
				g.holder = ""
				g.mu.Unlock()
				// An unlock whose outcome is unknown is tried again; the
				// holder must still hold the lock at its first try.
				for try := 0; ; try++ {
					err := m.Unlock(ctx, k)
					if err == nil || try > 0 && errors.Is(err, stowage.ErrNotLockHolder) {
						break
					}
					if errors.Is(err, stowage.ErrNotLockHolder) || try == 5 {
						violations.Add(1)
						t.Errorf("%s: unlock by %s: %v", k, owner, err)
						break
					}
				}
			}
		})
	}
	count := func() int {
		n := 0
		for _, g := range guards {
			g.mu.Lock()
			n += g.n
			g.mu.Unlock()
		}
		return n
	}
	waitUntil(t, func() bool { return count() >= 100 })
	tc.kill(ms[2])
	before := count()
	waitUntil(t, func() bool { return count() >= before+100 })
	close(stop)
	wg.Wait()
	if violations.Load() > 0 {
		t.Fatalf("%d violations", violations.Load())
	}
}

// BenchmarkLockUnlock measures uncontended Lock+Unlock pairs against
// plain Puts on the same memory map of a member alone: each of the
// parallel goroutines locks its own keys.
func BenchmarkLockUnlock(b *testing.B) {
	ctx := context.Background()
	n, err := stowage.Open(ctx, stowage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	m, err := stowage.GetMap(ctx, n, "bench", serde.String(), serde.String())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("put", func(b *testing.B) {
		var id atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			w := id.Add(1)
			for i := 0; pb.Next(); i++ {
				if err := m.Put(ctx, fmt.Sprintf("w%d-%d", w, i%1000), "v"); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("lock+unlock", func(b *testing.B) {
		var id atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			w := id.Add(1)
			octx := stowage.WithLockOwner(ctx, fmt.Sprint("w", w))
			for i := 0; pb.Next(); i++ {
				k := fmt.Sprintf("w%d-%d", w, i%1000)
				if _, err := m.Lock(octx, k, time.Minute); err != nil {
					b.Fatal(err)
				}
				if err := m.Unlock(octx, k); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
