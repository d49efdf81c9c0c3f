package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/nslease"
)

// The namespace lease of checkpoint storage (Node.OpenCheckpointStorage).

// withCheckpoints makes cfg's checkpoints live on the local disk in ns
// (ending with "/").
func withCheckpoints(cfg *config.Config, ns string) *config.Config {
	cfg.Engine.Checkpoint.Storage = config.CheckpointStorage{
		Type: "hdfs", MaxRetained: 5, Namespace: ns,
		PluginConfig: fsbackend.Properties{"namespace": ns, "storage.type": "hdfs", "fs.defaultFS": "file:///"},
	}
	return cfg
}

// storeCheckpoint stores checkpoint id of job-1 through node's storage.
func storeCheckpoint(t *testing.T, n *stowage.Node, id int64) {
	t.Helper()
	ctx := context.Background()
	st, err := n.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "job-1", PipelineID: 1, CheckpointID: id, States: []byte("state")}); err != nil {
		t.Fatal(err)
	}
}

// TestSecondClusterRefusedOnCheckpoints: two clusters whose map stores
// are apart but whose checkpoints share one namespace: the second one's
// checkpoint storage is refused with an *nslease.HeldError that names the
// namespace and the first cluster's members; a member joining the first
// cluster opens it, and so does the first cluster restarted on its
// address, finding its checkpoints.
func TestSecondClusterRefusedOnCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts membership on loopback ports")
	}
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck") + "/"
	cfg := func(sub string, port, join int) *config.Config {
		return withCheckpoints(nsConfig(t, filepath.Join(dir, sub), port, join), ck)
	}
	pa, pa2, pb := freePort(t), freePort(t), freePort(t)
	a1 := open(t, stowage.Options{Config: cfg("a", pa, pa)})
	storeCheckpoint(t, a1, 1)
	a2, err := stowage.Open(context.Background(), stowage.Options{Config: cfg("a", pa2, pa)})
	if err != nil {
		a1.Close()
		t.Fatal(err)
	}
	storeCheckpoint(t, a2, 2) // a member of the cluster that holds the namespace

	b := open(t, stowage.Options{Config: cfg("b", pb, pb)}) // its map store is its own
	_, err = b.OpenCheckpointStorage(context.Background())
	var held *nslease.HeldError
	if !errors.Is(err, stowage.ErrNamespaceInUse) || !errors.As(err, &held) {
		b.Close()
		a2.Close()
		a1.Close()
		t.Fatalf("second cluster's checkpoint storage: err = %v, want an *nslease.HeldError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, strconv.Quote(ck)) || !strings.Contains(msg, fmt.Sprintf("127.0.0.1:%d", pa)) {
		t.Errorf("the error names neither the checkpoint namespace nor the first cluster's members: %s", msg)
	}
	b.Close()

	// A full restart of the first cluster on its address.
	a2.Close()
	a1.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	again := open(t, stowage.Options{Config: cfg("a", pa, pa)})
	defer again.Close()
	st, err := again.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatalf("the first cluster restarted on its address: %v", err)
	}
	defer st.Close()
	got, err := st.GetLatestCheckpointByJobAndPipeline(ctx, "job-1", 1)
	if err != nil || got.CheckpointID != 2 {
		t.Fatalf("latest checkpoint after the restart: %d, %v; want 2", got.CheckpointID, err)
	}
}

// TestCheckpointStoreFenced: while a member cannot renew the lease of its
// checkpoint namespace, stores and deletes are refused with
// ErrNamespaceLeaseLost and checkpoint.ErrFenced, and nothing is
// written; once the renewals resume they are accepted again; after the
// node closed they are refused.
func TestCheckpointStoreFenced(t *testing.T) {
	dir := t.TempDir()
	var blocked atomic.Bool
	cfg := withCheckpoints(nsConfig(t, filepath.Join(dir, "imap"), 0, 0), filepath.Join(dir, "ck")+"/")
	cfg.Hazelcast.Properties["stowage.namespace.lease.ttl"] = fenceTTL.String()
	n := open(t, stowage.Options{Config: cfg, TestHooks: blockLease(&blocked)})
	ctx := context.Background()
	st, err := n.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	state := func(id int64) checkpoint.PipelineState {
		return checkpoint.PipelineState{JobID: "job-1", PipelineID: 1, CheckpointID: id, States: []byte("state")}
	}
	if _, err := st.StoreCheckpoint(ctx, state(1)); err != nil {
		t.Fatal(err)
	}

	blocked.Store(true)
	id := int64(1)
	deadline := time.Now().Add(3 * fenceTTL)
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		id++
		_, err = st.StoreCheckpoint(ctx, state(id))
	}
	if !errors.Is(err, stowage.ErrNamespaceLeaseLost) || !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("store while the lease is not renewed: %v, want ErrNamespaceLeaseLost and checkpoint.ErrFenced", err)
	}
	if !strings.Contains(err.Error(), "checkpoint namespace") {
		t.Errorf("the refusal does not name the checkpoint namespace: %v", err)
	}
	if _, err := st.GetCheckpoint(ctx, "job-1", 1, id); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the refused checkpoint reads back: %v", err)
	}
	if err := st.DeleteCheckpoint(ctx, "job-1"); !errors.Is(err, stowage.ErrNamespaceLeaseLost) {
		t.Fatalf("delete while the lease is not renewed: %v, want ErrNamespaceLeaseLost", err)
	}
	if err := st.DeleteCheckpointByID(ctx, "job-1", 1, id-1); !errors.Is(err, stowage.ErrNamespaceLeaseLost) {
		t.Fatalf("delete of one checkpoint while the lease is not renewed: %v, want ErrNamespaceLeaseLost", err)
	}
	if _, err := st.AsyncStoreCheckpoint(ctx, state(id+1)).Wait(ctx); !errors.Is(err, stowage.ErrNamespaceLeaseLost) {
		t.Fatalf("asynchronous store while the lease is not renewed: %v, want ErrNamespaceLeaseLost", err)
	}
	if got, err := st.GetLatestCheckpointByJobAndPipeline(ctx, "job-1", 1); err != nil || got.CheckpointID != id-1 {
		t.Fatalf("reads while fenced: %d, %v; want checkpoint %d", got.CheckpointID, err, id-1)
	}

	blocked.Store(false)
	deadline = time.Now().Add(3 * fenceTTL)
	for {
		_, err = st.StoreCheckpoint(ctx, state(id+2))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("store once the renewals resumed: %v", err)
	}

	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StoreCheckpoint(ctx, state(id+3)); !errors.Is(err, stowage.ErrNamespaceLeaseLost) {
		t.Fatalf("store after the node closed: %v, want ErrNamespaceLeaseLost", err)
	}
}

// TestCheckpointLeaseStandaloneRestart: opening the storage again on the
// same node reuses the lease; a stand-alone member restarted after Close
// (which released it) takes it at once.
func TestCheckpointLeaseStandaloneRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := func() *config.Config {
		return withCheckpoints(nsConfig(t, filepath.Join(dir, "imap"), 0, 0), filepath.Join(dir, "ck")+"/")
	}
	n := open(t, stowage.Options{Config: cfg()})
	storeCheckpoint(t, n, 1)
	storeCheckpoint(t, n, 2) // the lease the node holds, again
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.OpenCheckpointStorage(context.Background()); !errors.Is(err, stowage.ErrClosed) {
		t.Fatalf("checkpoint storage of a closed node: %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	again, err := stowage.Open(ctx, stowage.Options{Config: cfg()})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	st, err := again.OpenCheckpointStorage(ctx)
	if err != nil {
		t.Fatalf("restarted member alone: %v", err)
	}
	st.Close()
}
