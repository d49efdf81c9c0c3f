package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	_ "github.com/stowage/stowage/fsbackend/local" // registers "local"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func TestFactoryHDFSOnLocalDisk(t *testing.T) {
	dir := t.TempDir()
	ns := dir + "/checkpoint/"
	for _, name := range []string{"hdfs", "HDFS"} {
		s, err := checkpoint.New(ctx, name, checkpoint.FactoryOptions{
			Namespace: ns, MaxRetained: 2,
			Properties: fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"},
		})
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		for id := int64(1); id <= 4; id++ {
			mustStore(t, s, checkpointtest.State("job", 1, id))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "checkpoint", "job"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{checkpoint.FileName(1, 3), checkpoint.FileName(1, 4)}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("files on disk %v, want %v (max-retained 2 across two storages)", names, want)
	}
}

func TestFactoryLocalFileIsDeprecated(t *testing.T) {
	dir := t.TempDir()
	var buf syncBuffer
	s, err := checkpoint.New(ctx, "localfile", checkpoint.FactoryOptions{
		Namespace: dir + "/", Logger: newTextLogger(&buf),
		// localfile is always the local disk, whatever else is configured.
		Properties: fsbackend.Properties{"storage.type": "s3", "s3.bucket": "s3a://nowhere"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "deprecated") {
		t.Fatalf("no deprecation warning logged:\n%s", out)
	}
	mustStore(t, s, checkpointtest.State("j", 1, 1))
	if _, err := os.Stat(filepath.Join(dir, "j", checkpoint.FileName(1, 1))); err != nil {
		t.Fatalf("localfile did not store on the local disk: %v", err)
	}
	got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
	if err != nil || got.CheckpointID != 1 {
		t.Fatalf("latest = %d, %v", got.CheckpointID, err)
	}
}

func TestFactoryErrors(t *testing.T) {
	_, err := checkpoint.New(ctx, "cassandra", checkpoint.FactoryOptions{})
	if !errors.Is(err, checkpoint.ErrUnknownStorage) {
		t.Fatalf("unknown factory: err %v, want ErrUnknownStorage", err)
	}
	for _, want := range []string{"checkpoint.storage.type", `"cassandra"`, "hdfs", "localfile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	// A back-end error names the offending key.
	_, err = checkpoint.New(ctx, "hdfs", checkpoint.FactoryOptions{Properties: fsbackend.Properties{"storage.type": "floppy"}})
	if err == nil || !strings.Contains(err.Error(), "storage.type") {
		t.Fatalf("bad storage.type: err %v, want one naming storage.type", err)
	}
	// A bad namespace is refused before anything is written.
	_, err = checkpoint.New(ctx, "hdfs", checkpoint.FactoryOptions{Namespace: t.TempDir() + "/no-slash",
		Properties: fsbackend.Properties{"fs.defaultFS": "file:///"}})
	if err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Fatalf("namespace without trailing slash: err %v", err)
	}
}

func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    checkpoint.Factory
	}{
		{"hdfs", func(context.Context, checkpoint.FactoryOptions) (checkpoint.Storage, error) { return nil, nil }},
		{"", func(context.Context, checkpoint.FactoryOptions) (checkpoint.Storage, error) { return nil, nil }},
		{"nil-factory", nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", tc.name)
				}
			}()
			checkpoint.Register(tc.name, tc.f)
		}()
	}
}

// ExampleRegister shows how a user plugs in a checkpoint storage of their
// own, as SeaTunnel's CheckpointStorageFactory allowed: register a factory
// under a new storage type name from an init function, then select it with
// seatunnel.engine.checkpoint.storage.type. This one keeps checkpoints in
// memory, reusing the file storage on an in-memory FS.
func ExampleRegister() {
	checkpoint.Register("in-memory", func(ctx context.Context, opts checkpoint.FactoryOptions) (checkpoint.Storage, error) {
		return checkpoint.Open(ctx, checkpoint.Options{
			FS: memfs.New(), Namespace: opts.Namespace, MaxRetained: opts.MaxRetained, Logger: opts.Logger,
		})
	})

	ctx := context.Background()
	s, err := checkpoint.New(ctx, "in-memory", checkpoint.FactoryOptions{Namespace: "/seatunnel/checkpoint/", MaxRetained: 3})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for id := int64(1); id <= 5; id++ {
		if _, err := s.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "42", PipelineID: 1, CheckpointID: id, States: []byte("...")}); err != nil {
			panic(err)
		}
	}
	kept, _ := s.GetCheckpointsByJobAndPipeline(ctx, "42", 1)
	latest, _ := s.GetLatestCheckpointByJobAndPipeline(ctx, "42", 1)
	fmt.Println("kept", len(kept), "latest", latest.CheckpointID)
	fmt.Println(slices.Contains(checkpoint.Registered(), "in-memory"))
	// Output:
	// kept 3 latest 5
	// true
}
