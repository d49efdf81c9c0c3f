package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/nslease"
)

// A second member process whose map store is its own but whose
// checkpoints share the namespace of a running one stops at start with
// an error naming the checkpoint namespace; once the first was killed
// (its host lock dropped by the kernel), a member restarted on that
// configuration starts at once.
func TestNodeRefusedOnHeldCheckpointNamespace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ck := filepath.Join(dir, "checkpoint") + "/"
	props := map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"}
	cfgA, cfgB := filepath.Join(dir, "config-a"), filepath.Join(dir, "config-b")
	for i, c := range []string{cfgA, cfgB} {
		if err := writeConfigDirOn(c, "ck"+strconv.Itoa(i), filepath.Join(dir, "imap"+strconv.Itoa(i)), ck, netSpec{}, props); err != nil {
			t.Fatal(err)
		}
	}
	first, err := startNode(ctx, cfgA, filepath.Join(dir, "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.kill()
	if _, err := first.waitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute) // a second node that starts would serve forever
	defer cancel()
	second := exec.CommandContext(cctx, exe, "node", "--config-dir", cfgB, "--http", "127.0.0.1:0")
	second.Env = append(os.Environ(), childEnv...)
	var o, e bytes.Buffer
	second.Stdout, second.Stderr = &o, &e
	err = second.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || cctx.Err() != nil {
		t.Fatalf("second node on a held checkpoint namespace: %v (stdout %q, stderr %q); want exit 1 at start", err, o.String(), e.String())
	}
	if !strings.Contains(e.String(), "checkpoint namespace "+strconv.Quote(ck)) || strings.Contains(o.String(), "listening") {
		t.Fatalf("second node's error does not name the checkpoint namespace: stdout %q, stderr %q", o.String(), e.String())
	}

	first.kill()
	again, err := startNode(ctx, cfgA, filepath.Join(dir, "again.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer again.kill()
	if _, err := again.waitHealthy(ctx, time.Minute); err != nil {
		t.Fatalf("the member restarted after kill -9: %v", err)
	}
}

// Two clusters whose map stores are apart on S3 share one checkpoint
// namespace there: the second one's checkpoint storage is refused with an
// *nslease.HeldError naming the namespace and the first one's member
// (records made with If-None-Match: *); once the first, alone, closed and
// released the lease, the second opens it at once and finds the first's
// checkpoint.
func TestTwoClustersOneCheckpointNamespaceS3(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("two"); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://two/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDTWOCLUSTERS",
		"fs.s3a.secret.key":               "two-clusters-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	}
	member := func(ns string, port int) *config.Config {
		cfg := nsMember(t, ns, port, port, props)
		pc := fsbackend.Properties{"namespace": "/ck/"}
		maps.Copy(pc, props)
		cfg.Engine.Checkpoint.Storage = config.CheckpointStorage{Type: "hdfs", MaxRetained: 3, Namespace: "/ck/", PluginConfig: pc}
		return cfg
	}
	ctx := context.Background()
	pa, pb := freePort(t), freePort(t)
	a, err := stowage.Open(ctx, stowage.Options{Config: member("/ns-a", pa)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sa, err := a.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "job-1", PipelineID: 1, CheckpointID: 7, States: []byte("state")}); err != nil {
		t.Fatal(err)
	}
	sa.Close()

	b, err := stowage.Open(ctx, stowage.Options{Config: member("/ns-b", pb)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.OpenCheckpointStorage(ctx)
	var held *nslease.HeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), `checkpoint namespace "/ck/"`) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", pa)) {
		t.Fatalf("second cluster's checkpoint storage: %v, want an *nslease.HeldError naming /ck/ and 127.0.0.1:%d", err, pa)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	sb, err := b.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatalf("once the first cluster released the lease: %v", err)
	}
	defer sb.Close()
	if got, err := sb.GetLatestCheckpointByJobAndPipeline(ctx, "job-1", 1); err != nil || got.CheckpointID != 7 {
		t.Fatalf("the first cluster's checkpoint: %d, %v", got.CheckpointID, err)
	}
}
