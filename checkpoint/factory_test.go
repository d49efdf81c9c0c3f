package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/config"
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
	want := []string{checkpoint.FileName(1, 3), checkpoint.FileName(1, 4), "latest"}
	slices.Sort(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("files on disk %v, want %v (max-retained 2 across two storages)", names, want)
	}
	// The latest directory: the job's and the pipeline's markers and one
	// pointer, at checkpoint 4.
	entries, err = os.ReadDir(filepath.Join(dir, "checkpoint", "job", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 || names[0] != "complete" || names[1] != "p0000000001" || !strings.HasPrefix(names[2], "p0000000001-s") || !strings.HasSuffix(names[2], "-c0000000000000000004") {
		t.Fatalf("latest directory %v, want complete, the pipeline's marker and a pointer at checkpoint 4", names)
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

// recording holds what the factory registered under recordingStorage was
// given. The test registers it as a user would, from an init function; it
// stores on an in-memory FS.
var recording struct {
	mu    sync.Mutex
	calls []checkpoint.FactoryOptions
}

const recordingStorage = "Recording-Store.v1"

func init() {
	checkpoint.Register(recordingStorage, func(ctx context.Context, opts checkpoint.FactoryOptions) (checkpoint.Storage, error) {
		recording.mu.Lock()
		recording.calls = append(recording.calls, opts)
		recording.mu.Unlock()
		return checkpoint.Open(ctx, checkpoint.Options{FS: memfs.New(), Namespace: opts.Namespace, MaxRetained: opts.MaxRetained})
	})
}

// A seatunnel.yaml that selects a factory the user registered parses, and
// building its storage goes through that factory with the block's
// plugin-config as written, keys config does not know included.
func TestCustomFactoryFromSeatunnelYAML(t *testing.T) {
	const yaml = `seatunnel:
  engine:
    checkpoint:
      storage:
        type: recording-store.V1
        max-retained: 4
        plugin-config:
          namespace: /custom/ck
          storage.type: cassandra
          fs.defaultFS: cql://db.example:9042
          keyspace: checkpoints
`
	c, err := config.Parse([]byte(yaml), nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	recording.mu.Lock()
	before := len(recording.calls)
	recording.mu.Unlock()
	s, err := buildFromConfig(t.Context(), c)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	defer s.Close()
	recording.mu.Lock()
	calls := recording.calls[before:]
	recording.mu.Unlock()
	if len(calls) != 1 {
		t.Fatalf("the registered factory was called %d times, want 1", len(calls))
	}
	got := calls[0]
	if got.Namespace != "/custom/ck/" || got.MaxRetained != 4 {
		t.Errorf("factory got namespace %q max-retained %d, want /custom/ck/ and 4", got.Namespace, got.MaxRetained)
	}
	for k, v := range map[string]string{"storage.type": "cassandra", "fs.defaultFS": "cql://db.example:9042", "keyspace": "checkpoints", "namespace": "/custom/ck/"} {
		if got.Properties[k] != v {
			t.Errorf("factory got plugin-config %s = %q, want %q", k, got.Properties[k], v)
		}
	}
	mustStore(t, s, checkpointtest.State("j", 1, 1))
	if st, err := s.GetLatestCheckpointByJobAndPipeline(t.Context(), "j", 1); err != nil || st.CheckpointID != 1 {
		t.Fatalf("latest through the custom storage = %d, %v", st.CheckpointID, err)
	}
}

// A well-formed type that no factory has parses (config cannot know the
// registry), and building fails naming the key, the value and every
// registered name.
func TestUnregisteredFactoryFromSeatunnelYAML(t *testing.T) {
	c, err := config.Parse([]byte("seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: Cassandra\n"), nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	s, err := buildFromConfig(t.Context(), c)
	if err == nil {
		s.Close()
		t.Fatal("built a storage for an unregistered type")
	}
	if !errors.Is(err, checkpoint.ErrUnknownStorage) {
		t.Errorf("error %q does not match ErrUnknownStorage", err)
	}
	names := checkpoint.Registered()
	if len(names) < 3 {
		t.Fatalf("Registered() = %v, want hdfs, localfile and the test's own", names)
	}
	for _, w := range append([]string{"seatunnel.engine.checkpoint.storage.type", `"cassandra"`}, names...) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}

// Register refuses exactly the names config refuses as
// checkpoint.storage.type, so that every registered factory can be
// selected from seatunnel.yaml.
func TestRegisterNamesAgreeWithConfig(t *testing.T) {
	for _, name := range checkpoint.Registered() {
		if !config.ValidCheckpointStorageName(name) {
			t.Errorf("registered name %q is not a valid checkpoint.storage.type", name)
		}
		st := "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: " + name + "\n"
		if _, err := config.Parse([]byte(st), nil); err != nil {
			t.Errorf("type %s: %v", name, err)
		}
	}
	f := func(context.Context, checkpoint.FactoryOptions) (checkpoint.Storage, error) { return nil, nil }
	for _, name := range []string{"", " ", "s3://bucket", "my store", "1st", "-x", "a/b", strings.Repeat("x", 65)} {
		if config.ValidCheckpointStorageName(strings.ToLower(strings.TrimSpace(name))) {
			t.Errorf("config accepts %q", name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", name)
				}
			}()
			checkpoint.Register(name, f)
		}()
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
