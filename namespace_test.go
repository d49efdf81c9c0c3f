package stowage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend/nslease"
	"github.com/stowage/stowage/serde"
)

// freePort returns a port free for TCP and UDP on 127.0.0.1 (membership
// uses both).
func freePort(t *testing.T) int {
	t.Helper()
	for try := 0; try < 20; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		l.Close()
		if err == nil {
			u.Close()
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

// nsConfig is a member on 127.0.0.1:port joining join (0: alone, without
// membership), whose engine* maps persist under dir/test.
func nsConfig(t *testing.T, dir string, port, join int) *config.Config {
	t.Helper()
	network := ""
	if port != 0 {
		network = fmt.Sprintf(`  network:
    port:
      port: %d
      auto-increment: false
    join:
      tcp-ip:
        enabled: true
        member-list:
          - 127.0.0.1:%d
`, port, join)
	}
	y := `hazelcast:
  cluster-name: test
` + network + `  properties:
    stowage.namespace.lease.ttl: 1s
  map:
    engine*:
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

// putAll writes n keys and returns what was acknowledged.
func putAll(t *testing.T, node *stowage.Node, n int) map[string]string {
	t.Helper()
	m := strMap(t, node, "engine_jobs")
	want := map[string]string{}
	for i := 0; i < n; i++ {
		k, v := fmt.Sprintf("job-%d", i), fmt.Sprintf("state-%d", i)
		if err := m.Put(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	return want
}

// checkAll fails unless every acknowledged key reads back.
func checkAll(t *testing.T, node *stowage.Node, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := node.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	m := strMap(t, node, "engine_jobs")
	for k, v := range want {
		if got, ok, err := m.Get(ctx, k); err != nil || !ok || got != v {
			t.Fatalf("%s = %q, %v, %v; want %q", k, got, ok, err, v)
		}
	}
}

// TestSecondStandaloneRefused: a second stand-alone member on the
// namespace of a running one refuses to start, naming the namespace and
// the other member; once the first stopped (releasing its lease) the
// second starts and finds every acknowledged write.
func TestSecondStandaloneRefused(t *testing.T) {
	dir := t.TempDir()
	first := open(t, stowage.Options{Config: nsConfig(t, dir, 0, 0)})
	want := putAll(t, first, 200)

	_, err := stowage.Open(context.Background(), stowage.Options{Config: nsConfig(t, dir, 0, 0)})
	if !errors.Is(err, stowage.ErrNamespaceInUse) {
		first.Close()
		t.Fatalf("second member on the namespace: err = %v, want ErrNamespaceInUse", err)
	}
	if msg := err.Error(); !strings.Contains(msg, strconv.Quote(dir)) || !strings.Contains(msg, "stand-alone member on this host") {
		t.Errorf("the error names neither the namespace nor the other member: %s", msg)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := open(t, stowage.Options{Config: nsConfig(t, dir, 0, 0)})
	defer second.Close()
	checkAll(t, second, want)
}

// TestSecondClusterRefused: members joining a cluster share its
// namespace; a second cluster with the same clusterName on the same
// namespace refuses to start while the first renews, naming the first's
// members; once the first stopped without releasing (its last members
// closed while they still saw each other) and its lease expired, the
// second starts and finds every acknowledged write of the first.
func TestSecondClusterRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	pa, pa2, pb := freePort(t), freePort(t), freePort(t)
	a1 := open(t, stowage.Options{Config: nsConfig(t, dir, pa, pa)})
	a2, err := stowage.Open(context.Background(), stowage.Options{Config: nsConfig(t, dir, pa2, pa)})
	if err != nil {
		a1.Close()
		t.Fatalf("a member joining the cluster that holds the namespace: %v", err)
	}
	want := putAll(t, a1, 200)

	_, err = stowage.Open(context.Background(), stowage.Options{Config: nsConfig(t, dir, pb, pb)})
	if !errors.Is(err, stowage.ErrNamespaceInUse) {
		a2.Close()
		a1.Close()
		t.Fatalf("second cluster on the namespace: err = %v, want ErrNamespaceInUse", err)
	}
	if msg := err.Error(); !strings.Contains(msg, strconv.Quote(dir)) || !strings.Contains(msg, fmt.Sprintf("127.0.0.1:%d", pa)) {
		t.Errorf("the error names neither the namespace nor the first cluster's members: %s", msg)
	}
	a2.Close()
	a1.Close()
	b := open(t, stowage.Options{Config: nsConfig(t, dir, pb, pb)})
	defer b.Close()
	checkAll(t, b, want)
}

// TestStorageFilesOwnerOnly: every file and directory a member creates
// in its map store's namespace (logs, snapshots, META, the lease and
// probe records) is readable by its owner only.
func TestStorageFilesOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	n := open(t, stowage.Options{Config: nsConfig(t, dir, 0, 0)})
	putAll(t, n, 50)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	count := 0
	err := filepath.WalkDir(filepath.Join(dir, "test"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, st.Mode().Perm(), want)
		}
		count++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < 4 {
		t.Fatalf("only %d entries under the namespace", count)
	}
}

// writeLeaseRecord leaves a lease record of members under dir/test as a
// member that was killed would: unreleased, valid for an hour.
func writeLeaseRecord(t *testing.T, dir string, members ...string) {
	t.Helper()
	now := time.Now()
	b, err := json.Marshal(nslease.Record{Members: members, Renewed: now, Expires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "test", nslease.LeaseDir, fmt.Sprintf("%020d", 7))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStandaloneRestartAfterCrash: a member alone that finds the unexpired
// lease of a killed member alone of its own host (whose host lock the
// kernel dropped) starts at once; the lease of a member alone of another
// host, or of another cluster, is not taken over before it expires.
func TestStandaloneRestartAfterCrash(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	writeLeaseRecord(t, dir, "local-20260101T000000-dead@"+host)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := stowage.Open(ctx, stowage.Options{Config: nsConfig(t, dir, 0, 0)})
	if err != nil {
		t.Fatalf("restart after a crash of the member alone of this host: %v", err)
	}
	n.Close()

	for _, other := range []string{"local-20260101T000000-dead@another-host", "10.1.2.3:5801"} {
		dir := t.TempDir()
		writeLeaseRecord(t, dir, other)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		n, err := stowage.Open(ctx, stowage.Options{Config: nsConfig(t, dir, 0, 0)})
		cancel()
		if err == nil {
			n.Close()
			t.Fatalf("a member alone took over the unexpired lease of %s", other)
		}
	}
}

// TestOwnFilesAreNoMapNames: the names of stowage's own entries beside the
// maps, and any name starting with a dot, are refused as map names.
func TestOwnFilesAreNoMapNames(t *testing.T) {
	n := open(t, stowage.Options{Config: nsConfig(t, t.TempDir(), 0, 0)})
	defer n.Close()
	for _, name := range []string{".stowage-members", nslease.LeaseDir, ".stowage", ".x"} {
		_, err := stowage.GetMap(context.Background(), n, name, serde.String(), serde.String())
		if !errors.Is(err, stowage.ErrInvalidMapName) || !strings.Contains(err.Error(), "reserved for stowage's own files") {
			t.Errorf("map name %q: err = %v, want ErrInvalidMapName saying the name is reserved", name, err)
		}
	}
}
