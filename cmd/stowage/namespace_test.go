package main

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// nsMember is the configuration of a one-member cluster on 127.0.0.1:port
// joining join, whose engine* maps persist on the storage of props under
// ns/two, with a 1 s namespace lease.
func nsMember(t *testing.T, ns string, port, join int, props map[string]string) *config.Config {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var p strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&p, "          %s: %q\n", k, props[k])
	}
	y := fmt.Sprintf(`hazelcast:
  cluster-name: two
  network:
    port:
      port: %d
      auto-increment: false
    join:
      tcp-ip:
        enabled: true
        member-list:
          - 127.0.0.1:%d
  properties:
    stowage.namespace.lease.ttl: 1s
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: hdfs
          namespace: %s
          clusterName: two
%s`, port, join, ns, p.String())
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// twoClustersOn: a cluster of two members writes; a second cluster on the
// same namespace refuses to start, naming the first's members; both
// members of the first stop while they still see each other (no release,
// as if killed), and once the lease expired the second cluster starts and
// reads every acknowledged write of the first.
func twoClustersOn(t *testing.T, ns string, props map[string]string) {
	ctx := context.Background()
	pa, pa2, pb := freePort(t), freePort(t), freePort(t)
	a1, err := stowage.Open(ctx, stowage.Options{Config: nsMember(t, ns, pa, pa, props)})
	if err != nil {
		t.Fatal(err)
	}
	a2, err := stowage.Open(ctx, stowage.Options{Config: nsMember(t, ns, pa2, pa, props)})
	if err != nil {
		a1.Close()
		t.Fatalf("a member joining the cluster that holds the namespace: %v", err)
	}
	m, err := stowage.GetMap(ctx, a1, "engine_two", serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i < 100; i++ {
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		if err := m.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	_, err = stowage.Open(ctx, stowage.Options{Config: nsMember(t, ns, pb, pb, props)})
	if !errors.Is(err, stowage.ErrNamespaceInUse) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", pa)) || !strings.Contains(err.Error(), fmt.Sprintf("namespace %q clusterName \"two\"", ns)) {
		a2.Close()
		a1.Close()
		t.Fatalf("second cluster: err = %v, want ErrNamespaceInUse naming the namespace and 127.0.0.1:%d", err, pa)
	}
	a2.Close()
	a1.Close()
	b, err := stowage.Open(ctx, stowage.Options{Config: nsMember(t, ns, pb, pb, props)})
	if err != nil {
		t.Fatalf("second cluster once the first's lease expired: %v", err)
	}
	defer b.Close()
	if err := b.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	mb, err := stowage.GetMap(ctx, b, "engine_two", serde.String(), serde.String())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got, ok, err := mb.Get(ctx, k); err != nil || !ok || got != v {
			t.Fatalf("%s = %q, %v, %v after the take-over; want %q", k, got, ok, err, v)
		}
	}
}

func TestTwoClustersOneNamespaceS3(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("two"); err != nil {
		t.Fatal(err)
	}
	twoClustersOn(t, "/ns", map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://two/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDTWOCLUSTERS",
		"fs.s3a.secret.key":               "two-clusters-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	})
}

func TestTwoClustersOneNamespaceHDFS(t *testing.T) {
	nn := os.Getenv("STOWAGE_TEST_HDFS")
	if nn == "" {
		t.Skip(`STOWAGE_TEST_HDFS is not set: start the fixture with eval "$(bash testdata/hdfs/start.sh)"`)
	}
	twoClustersOn(t, fmt.Sprintf("/stowage-test/ns-%d-%d", os.Getpid(), time.Now().UnixNano()), map[string]string{
		"storage.type": "hdfs",
		"fs.defaultFS": "hdfs://" + nn,
	})
}

// TestInspectErrorHidesURIUserInfo: an error about --fs does not print
// the user information of the URI.
func TestInspectErrorHidesURIUserInfo(t *testing.T) {
	var out, errw strings.Builder
	code := run([]string{"inspect", "--fs", "ftp://AKIDUSER:S3CR3T-PASS@host/x", "--namespace", "/ns", "--cluster", "c", "maps"}, &out, &errw)
	if code == 0 {
		t.Fatalf("inspect on an ftp URI succeeded: %s", out.String())
	}
	if all := out.String() + errw.String(); strings.Contains(all, "S3CR3T-PASS") || strings.Contains(all, "AKIDUSER") || !strings.Contains(all, "ftp://******@host") {
		t.Fatalf("inspect printed %q; want the URI with its user information redacted", all)
	}
}
