package stowage_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/internal/testhook"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde"
)

// longStop bounds every wait in the cluster tests; it is a safety net,
// not a timing assertion.
const longStop = 60 * time.Second

// tcluster is a cluster of in-process members over a MemNetwork, with
// membership scripted by the test: failure detection is the test saying
// so (drop), which makes fail-over deterministic.
type tcluster struct {
	t       *testing.T
	net     *cluster.MemNetwork
	cfg     func() *config.Config
	mu      sync.Mutex
	members []*tmember // live, oldest first
	seq     int
	// lease is the members' Options.Lease (0: the default).
	lease time.Duration
	// openFS, if set, gives each member (by id) the map stores' file
	// systems (testhook.Hooks.OpenFS), to inject faults into one member.
	openFS func(id string) func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error)
	// grace is the members' Options.BackupGrace (0: none).
	grace time.Duration
}

type tmember struct {
	id   string
	self cluster.Member
	view *cluster.StaticView
	tr   *cluster.MemTransport
	node *stowage.Node
}

func newTCluster(t *testing.T, cfg func() *config.Config) *tcluster {
	return &tcluster{t: t, net: cluster.NewMemNetwork(), cfg: cfg}
}

// testLogger logs warnings and errors of the members (STOWAGE_TEST_LOG=debug
// for everything).
func testLogger(id string) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("STOWAGE_TEST_LOG") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("member", id)
}

// add starts a new member and makes every live member see it.
func (c *tcluster) add() *tmember {
	c.t.Helper()
	m, err := c.tryAdd(c.cfg())
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

// tryAdd starts a new member with cfg; a member that fails to open is
// not added.
func (c *tcluster) tryAdd(cfg *config.Config) (*tmember, error) {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	id := fmt.Sprintf("m%d", c.seq)
	c.mu.Unlock()
	self := cluster.Member{ID: id, Addr: id, RPC: id, Run: filestore.NewRunID(), Started: time.Unix(int64(c.seq), 0)}
	// Like a member that joins through its member list, the new member
	// sees the others from the start (alone, it would form a cluster of
	// its own: a split brain).
	m := &tmember{id: id, self: self, view: cluster.NewStaticView(self), tr: c.net.Transport(id)}
	var others []cluster.Member
	for _, x := range c.live() {
		others = append(others, x.self)
	}
	m.view.Set(append(others, self)...)
	hooks := &testhook.Hooks{View: m.view, Transport: m.tr}
	if c.openFS != nil {
		hooks.OpenFS = c.openFS(id)
	}
	n, err := stowage.Open(context.Background(), stowage.Options{Config: cfg, Logger: testLogger(id),
		TestHooks: hooks, OpTimeout: longStop, Lease: c.lease, BackupGrace: c.grace})
	if err != nil {
		m.tr.Close()
		return nil, err
	}
	m.node = n
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	c.publish()
	c.t.Cleanup(func() { m.node.Close(); m.tr.Close() })
	return m, nil
}

// publish makes every live member see the live members.
func (c *tcluster) publish() {
	c.mu.Lock()
	ms := make([]cluster.Member, 0, len(c.members))
	for _, m := range c.members {
		ms = append(ms, m.self)
	}
	views := make([]*cluster.StaticView, 0, len(c.members))
	for _, m := range c.members {
		views = append(views, m.view)
	}
	c.mu.Unlock()
	for _, v := range views {
		v.Set(ms...)
	}
}

// drop removes a member from everybody's view (failure detected),
// without stopping it.
func (c *tcluster) drop(m *tmember) {
	c.mu.Lock()
	c.members = slices.DeleteFunc(c.members, func(x *tmember) bool { return x == m })
	c.mu.Unlock()
	c.publish()
}

// kill stops a member the hard way (no hand-over) and lets the others
// detect it.
func (c *tcluster) kill(m *tmember) {
	m.tr.Close()
	m.node.Close()
	c.drop(m)
}

// setView makes m see exactly members (a partial failure detection).
func (c *tcluster) setView(m *tmember, members ...*tmember) {
	ms := make([]cluster.Member, 0, len(members))
	for _, x := range members {
		ms = append(ms, x.self)
	}
	m.view.Set(ms...)
}

func (c *tcluster) live() []*tmember {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// waitLoaded waits until every live member serves what the table gives
// it, with the same table everywhere.
func (c *tcluster) waitLoaded() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	for {
		all := true
		var why string
		for _, m := range c.live() {
			if ok := m.node.Loaded(); !ok {
				all = false
				why = m.id + ": " + m.node.Cluster(ctx).Loading
				break
			}
		}
		if all {
			return
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("cluster not loaded within %s: %s", longStop, why)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// memoryConfig is a configuration with no persisted map and the given
// backup counts.
func memoryConfig(backups, async int) func() *config.Config {
	return func() *config.Config {
		y := fmt.Sprintf("hazelcast:\n  cluster-name: t\n  map:\n    default:\n      backup-count: %d\n      async-backup-count: %d\n", backups, async)
		cfg, err := config.Parse(nil, []byte(y))
		if err != nil {
			panic(err)
		}
		return cfg
	}
}

// sharedConfig persists engine* maps in dir, shared by every member.
func sharedConfig(t testing.TB, dir string, backups, minSize int) func() *config.Config {
	return func() *config.Config {
		y := `hazelcast:
  cluster-name: test
  properties:
    hazelcast.initial.min.cluster.size: ` + fmt.Sprint(minSize) + `
  map:
    engine*:
      backup-count: ` + fmt.Sprint(backups) + `
      map-store:
        enabled: true
        initial-mode: EAGER
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
}

var strCodec = serde.String()

// fatalDump fails the test, first writing every goroutine's stack to
// $STOWAGE_TEST_DIAG_DIR/goroutines.txt when that is set.
func fatalDump(t *testing.T, format string, a ...any) {
	t.Helper()
	if dir := os.Getenv("STOWAGE_TEST_DIAG_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, "goroutines.txt")); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 2)
			f.Close()
		}
	}
	t.Fatalf(format, a...)
}
