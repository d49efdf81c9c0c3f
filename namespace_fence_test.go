package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/nslease"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/testhook"
)

// fenceTTL is the lease TTL of the fencing tests.
const fenceTTL = 2 * time.Second

// fenceConfig is nsConfig with fenceTTL.
func fenceConfig(t *testing.T, dir string, port int) *config.Config {
	cfg := nsConfig(t, dir, port, port)
	cfg.Hazelcast.Properties["stowage.namespace.lease.ttl"] = fenceTTL.String()
	return cfg
}

// blockLease returns TestHooks whose FS fails every Create under the
// lease folder while *blocked: the renewals fail, reading the lease works.
func blockLease(blocked *atomic.Bool) *testhook.Hooks {
	inj := errorfs.InjectorFunc(func(c errorfs.Call) error {
		if blocked.Load() && c.Op == errorfs.OpCreate && strings.Contains(c.Name, nslease.LeaseDir) {
			return fmt.Errorf("%w: lease record %s", errorfs.ErrInjected, c.Name)
		}
		return nil
	})
	return &testhook.Hooks{OpenFS: func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, inj), nil
	}}
}

// putUntil puts fresh keys until done says stop, failing the test on an
// error other than ErrNamespaceLeaseLost; it returns the last error.
func putUntil(t *testing.T, m *stowage.Map[string, string], prefix string, done func(err error) bool) error {
	t.Helper()
	deadline := time.Now().Add(5 * fenceTTL)
	for i := 0; ; i++ {
		err := m.Put(context.Background(), fmt.Sprintf("%s-%d", prefix, i), "v")
		if err != nil && !errors.Is(err, stowage.ErrNamespaceLeaseLost) {
			t.Fatalf("put: %v, want nil or ErrNamespaceLeaseLost", err)
		}
		if done(err) {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("no change after %s; last put: %v", 5*fenceTTL, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeaseFenceStopsWrites: a member whose cluster cannot renew its
// namespace lease refuses writes with ErrNamespaceLeaseLost naming the
// namespace, still serves reads, and accepts writes again once the
// renewals resume.
func TestLeaseFenceStopsWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	var blocked atomic.Bool
	n := open(t, stowage.Options{Config: fenceConfig(t, dir, freePort(t)), TestHooks: blockLease(&blocked)})
	defer n.Close()
	m := strMap(t, n, "engine_jobs")
	if err := m.Put(context.Background(), "job", "v1"); err != nil {
		t.Fatal(err)
	}
	blocked.Store(true)
	err := putUntil(t, m, "blocked", func(err error) bool { return err != nil })
	if msg := err.Error(); !strings.Contains(msg, strconv.Quote(dir)) {
		t.Errorf("the error does not name the namespace: %s", msg)
	}
	if v, ok, err := m.Get(context.Background(), "job"); err != nil || !ok || v != "v1" {
		t.Fatalf("read while fenced: %q, %v, %v; want v1", v, ok, err)
	}
	srv := httptest.NewServer(httpapi.Handler(n))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/maps/engine_jobs/entries/job", strings.NewReader("v2"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "lease") {
		t.Fatalf("HTTP PUT while fenced: %s %s, want 503 naming the lease", resp.Status, body)
	}
	blocked.Store(false)
	putUntil(t, m, "renewed", func(err error) bool { return err == nil })
}

// TestFencedClusterLosesNothingOnTakeover: a cluster that cannot renew
// its lease keeps trying to write while a second cluster waits for the
// lease and takes the namespace over; every write the first acknowledged
// is read by the second, and the first acknowledges nothing afterwards.
func TestFencedClusterLosesNothingOnTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	var blocked atomic.Bool
	a := open(t, stowage.Options{Config: fenceConfig(t, dir, freePort(t)), TestHooks: blockLease(&blocked)})
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()
	want := putAll(t, a, 50)
	blocked.Store(true)

	var (
		mu      sync.Mutex
		acked   []string
		taken   atomic.Bool
		refused int // writes refused after the takeover
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		m := strMap(t, a, "engine_jobs")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			after := taken.Load()
			k := fmt.Sprintf("late-%d", i)
			err := m.Put(context.Background(), k, "v")
			mu.Lock()
			switch {
			case err == nil:
				acked = append(acked, k)
			case !errors.Is(err, stowage.ErrNamespaceLeaseLost):
				t.Errorf("put %s: %v, want nil or ErrNamespaceLeaseLost", k, err)
			case after:
				refused++
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()

	b := open(t, stowage.Options{Config: fenceConfig(t, dir, freePort(t))})
	defer b.Close()
	taken.Store(true)
	time.Sleep(fenceTTL / 2)
	close(stop)
	wg.Wait()
	aClosed = true
	if err := a.Close(); err != nil {
		t.Logf("close of the fenced cluster: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if refused == 0 {
		t.Fatal("the first cluster made no write after the takeover")
	}
	for _, k := range acked {
		want[k] = "v"
	}
	t.Logf("%d writes acknowledged after the renewals stopped, %d refused after the takeover", len(acked), refused)
	checkAll(t, b, want)
}

// TestFencedOwnerRefusalKeepsItsSentinel: in a cluster of two that cannot
// renew its namespace lease, a write through one member to a key the
// other owns is refused by the owner's store; the caller still gets an
// error matching ErrNamespaceLeaseLost (the HTTP API's 503), not a plain
// message.
func TestFencedOwnerRefusalKeepsItsSentinel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	var blocked atomic.Bool
	pa, pb := freePort(t), freePort(t)
	cfgB := nsConfig(t, dir, pb, pa)
	cfgB.Hazelcast.Properties["stowage.namespace.lease.ttl"] = fenceTTL.String()
	a := open(t, stowage.Options{Config: fenceConfig(t, dir, pa), TestHooks: blockLease(&blocked)})
	defer a.Close()
	b := open(t, stowage.Options{Config: cfgB, TestHooks: blockLease(&blocked)})
	defer b.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ci := a.Cluster(context.Background())
		if len(ci.PartitionsPerMember) == 2 && ci.Safe {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two members did not form a safe cluster: %+v", ci)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := strMap(t, a, "engine_jobs")
	if err := m.Put(context.Background(), "job", "v1"); err != nil {
		t.Fatal(err)
	}
	blocked.Store(true)
	putUntil(t, m, "blocked", func(err error) bool { return err != nil })
	// Fenced now: keys spread over both owners, and every refusal, local
	// or forwarded, keeps the sentinel (putUntil fails the test otherwise).
	refused := 0
	putUntil(t, m, "spread", func(err error) bool {
		if err != nil {
			refused++
		}
		return refused >= 40
	})
}

// TestFencedMemberLeavesFilesAlone: while its cluster cannot renew the
// namespace lease, a member's map store changes no file in the background
// either (its compaction waits: another cluster may own the files by
// then); once the lease is renewed, the compaction it held back runs.
func TestFencedMemberLeavesFilesAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	var blocked, watch atomic.Bool
	var mu sync.Mutex
	var changed []string
	inj := errorfs.InjectorFunc(func(c errorfs.Call) error {
		if strings.Contains(c.Name, nslease.LeaseDir) {
			if blocked.Load() && c.Op == errorfs.OpCreate {
				return fmt.Errorf("%w: lease record %s", errorfs.ErrInjected, c.Name)
			}
			return nil
		}
		switch c.Op {
		case errorfs.OpCreate, errorfs.OpRemove, errorfs.OpRename, errorfs.OpRemoveAll:
			if watch.Load() && strings.Contains(c.Name, "engine_jobs") {
				mu.Lock()
				changed = append(changed, string(c.Op)+" "+c.Name)
				mu.Unlock()
			}
		}
		return nil
	})
	hooks := &testhook.Hooks{OpenFS: func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, inj), nil
	}}
	n := open(t, stowage.Options{Config: fenceConfig(t, dir, freePort(t)), TestHooks: hooks})
	defer n.Close()
	m := strMap(t, n, "engine_jobs")
	big := strings.Repeat("x", 8<<10)
	ctx := context.Background()
	// A few keys overwritten until the fence: the log grows far beyond
	// the live bytes, and compaction is due a second after the last write.
	blocked.Store(true)
	deadline := time.Now().Add(5 * fenceTTL)
	for i := 0; ; i++ {
		err := m.Put(ctx, fmt.Sprintf("k%d", i%5), big)
		if errors.Is(err, stowage.ErrNamespaceLeaseLost) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fence within %s", 5*fenceTTL)
		}
	}
	watch.Store(true)
	time.Sleep(3 * time.Second)
	mu.Lock()
	if len(changed) > 0 {
		t.Errorf("a fenced member changed files: %v", changed)
	}
	changed = nil
	mu.Unlock()
	blocked.Store(false)
	deadline = time.Now().Add(10 * fenceTTL)
	for {
		mu.Lock()
		n := len(changed)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction within %s of the renewal: the fence's hold shows nothing", 10*fenceTTL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
