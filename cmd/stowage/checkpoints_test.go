package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend/memfs"
)

// checkpointFixture writes a config directory whose checkpoints live in
// dir/data/checkpoint/ and stores, through stowage.OpenCheckpointStorage,
// job-7's checkpoints (pipeline 1, checkpoint 1), (1, 2) and (2, 3), each
// with the 5-byte state "state". It returns the config directory.
func checkpointFixture(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDir(cfgDir, filepath.Join(dir, "data"), "ck"); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgDir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stowage.OpenCheckpointStorage(ctx, cfg, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p  int
		id int64
	}{{1, 1}, {1, 2}, {2, 3}} {
		if _, err := st.StoreCheckpoint(ctx, checkpoint.PipelineState{JobID: "job-7", PipelineID: c.p, CheckpointID: c.id, States: []byte("state")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return cfgDir
}

// inspectCheckpoints runs `stowage inspect --config-dir cfgDir
// [--json] checkpoints args...` and returns its output and exit code.
func inspectCheckpoints(cfgDir string, asJSON bool, args ...string) (string, int) {
	var o, e bytes.Buffer
	argv := []string{"inspect", "--config-dir", cfgDir}
	if asJSON {
		argv = append(argv, "--json")
	}
	code := run(append(append(argv, "checkpoints"), args...), &o, &e)
	return o.String() + e.String(), code
}

func TestInspectCheckpoints(t *testing.T) {
	dir := t.TempDir()
	cfgDir := checkpointFixture(t, dir)
	inspect := func(args ...string) (string, int) { return inspectCheckpoints(cfgDir, true, args...) }
	out, code := inspect("list", "job-7")
	var infos []checkpoint.CheckpointInfo
	if code != 0 || json.Unmarshal([]byte(out), &infos) != nil || len(infos) != 3 {
		t.Fatalf("list job-7 (%d): %s", code, out)
	}
	out, code = inspect("show", "job-7", "1")
	var info checkpoint.CheckpointInfo
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.CheckpointID != 2 || info.StateLength != 5 || info.CRC != checkpoint.CRCOK {
		t.Fatalf("show job-7 1 (%d): %s", code, out)
	}
	if out, code = inspect("verify"); code != 0 {
		t.Fatalf("verify of clean checkpoints exited %d: %s", code, out)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "data", "checkpoint", infos[0].File[strings.LastIndex(infos[0].File, "job-7"):]))
	if len(data) == 0 {
		t.Fatalf("checkpoint file %s not found under the namespace", infos[0].File)
	}
	path := filepath.Join(dir, "data", "checkpoint", infos[0].File[strings.LastIndex(infos[0].File, "job-7"):])
	data[len(data)/2] ^= 0xFF
	os.WriteFile(path, data, 0o644)
	if out, code = inspect("verify"); code != 1 || !strings.Contains(out, filepath.Base(path)) {
		t.Fatalf("verify of a damaged checkpoint exited %d: %s", code, out)
	}
}

// list without a job, show with an explicit checkpoint id, and the text
// output of list and show.
func TestInspectCheckpointsListShowText(t *testing.T) {
	cfgDir := checkpointFixture(t, t.TempDir())

	out, code := inspectCheckpoints(cfgDir, true, "list")
	var jobs []checkpoint.JobSummary
	if code != 0 || json.Unmarshal([]byte(out), &jobs) != nil {
		t.Fatalf("list (%d): %s", code, out)
	}
	if len(jobs) != 1 || jobs[0].Job != "job-7" || jobs[0].Files != 3 || jobs[0].Bytes <= 0 || len(jobs[0].Pipelines) != 2 ||
		jobs[0].Pipelines[0] != (checkpoint.PipelineSummary{Pipeline: 1, Checkpoints: 2, Oldest: 1, Latest: 2}) ||
		jobs[0].Pipelines[1] != (checkpoint.PipelineSummary{Pipeline: 2, Checkpoints: 1, Oldest: 3, Latest: 3}) {
		t.Fatalf("list = %+v", jobs)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"list"}, []string{"job-7\t3 files\t", "  pipeline 1: 2 checkpoints, ids 1..2\n", "  pipeline 2: 1 checkpoints, ids 3..3\n"}},
		{[]string{"list", "job-7"}, []string{"job-7\tpipeline 1\tcheckpoint 1\t", "job-7\tpipeline 1\tcheckpoint 2\t", "job-7\tpipeline 2\tcheckpoint 3\t", checkpoint.FileName(2, 3) + "\n"}},
		{[]string{"show", "job-7", "1"}, []string{"job:          job-7\n", "pipeline:     1\n", "checkpoint:   2\n", "state length: 5\n", "crc:          ok\n", checkpoint.FileName(1, 2)}},
		{[]string{"show", "job-7", "1", "1"}, []string{"checkpoint:   1\n", "crc:          ok\n", checkpoint.FileName(1, 1)}},
	} {
		out, code := inspectCheckpoints(cfgDir, false, tc.args...)
		if code != 0 {
			t.Errorf("%v exited %d: %s", tc.args, code, out)
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(out), "{") || strings.HasPrefix(strings.TrimSpace(out), "[") {
			t.Errorf("%v without --json printed JSON: %s", tc.args, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
		if strings.Contains(out, "skipped") || strings.Contains(out, "note:") {
			t.Errorf("%v: clean checkpoints, but the output mentions skipping:\n%s", tc.args, out)
		}
	}

	// An explicit checkpoint id shows that checkpoint, not the latest.
	out, code = inspectCheckpoints(cfgDir, true, "show", "job-7", "1", "1")
	var info checkpoint.CheckpointInfo
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.CheckpointID != 1 || info.Pipeline != 1 || info.StateLength != 5 || info.CRC != checkpoint.CRCOK || len(info.Skipped) != 0 {
		t.Fatalf("show job-7 1 1 (%d): %s", code, out)
	}
	if out, code = inspectCheckpoints(cfgDir, true, "show", "job-7", "1", "9"); code == 0 || !strings.Contains(out, "checkpoint 9") {
		t.Fatalf("show of a missing checkpoint exited %d: %s", code, out)
	}
}

// show with no checkpoint id, when the latest is damaged, shows the newest
// that reads clean and says which damaged one it skipped, in text and in
// JSON; asked for the damaged one by id it shows the damage.
func TestInspectCheckpointsShowSkipsDamagedLatest(t *testing.T) {
	dir := t.TempDir()
	cfgDir := checkpointFixture(t, dir)
	path := filepath.Join(dir, "data", "checkpoint", "job-7", checkpoint.FileName(1, 2))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xFF
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	out, code := inspectCheckpoints(cfgDir, true, "show", "job-7", "1")
	var info checkpoint.CheckpointInfo
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil {
		t.Fatalf("show job-7 1 (%d): %s", code, out)
	}
	if info.CheckpointID != 1 || info.CRC != checkpoint.CRCOK || len(info.Skipped) != 1 || info.Skipped[0].CheckpointID != 2 ||
		!strings.HasSuffix(info.Skipped[0].File, "job-7/"+checkpoint.FileName(1, 2)) || info.Skipped[0].Reason == "" {
		t.Fatalf("show job-7 1 with checkpoint 2 damaged: %+v", info)
	}
	if !strings.Contains(out, `"skipped_damaged"`) {
		t.Errorf("JSON lacks skipped_damaged: %s", out)
	}

	out, code = inspectCheckpoints(cfgDir, false, "show", "job-7", "1")
	for _, w := range []string{"checkpoint:   1\n", "note:", "latest checkpoint is damaged", "skipped:      damaged checkpoint 2 (", checkpoint.FileName(1, 2)} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("show job-7 1 text (%d) lacks %q:\n%s", code, w, out)
		}
	}

	out, code = inspectCheckpoints(cfgDir, false, "show", "job-7", "1", "2")
	if code != 0 || !strings.Contains(out, "crc:          bad\n") || !strings.Contains(out, "damage:") || strings.Contains(out, "skipped:") {
		t.Errorf("show job-7 1 2 text (%d):\n%s", code, out)
	}
}

// A checkpoint storage type registered by the user is what
// OpenCheckpointStorage builds from seatunnel.yaml, given the whole
// plugin-config; an unregistered type fails naming the key, the value and
// the registered names.
func TestOpenCheckpointStorageCustomFactory(t *testing.T) {
	ctx := context.Background()
	const yaml = `seatunnel:
  engine:
    checkpoint:
      storage:
        type: cmd-test-store
        max-retained: 2
        plugin-config:
          namespace: /ck/
          table: checkpoints
`
	c, err := config.Parse([]byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stowage.OpenCheckpointStorage(ctx, c, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got checkpoint.FactoryOptions
	select {
	case got = <-cmdTestStoreOpts:
	default:
		t.Fatal("OpenCheckpointStorage did not call the registered factory")
	}
	if got.Properties["table"] != "checkpoints" || got.Namespace != "/ck/" || got.MaxRetained != 2 {
		t.Fatalf("factory given %+v", got)
	}

	c2, err := config.Parse([]byte(strings.Replace(yaml, "cmd-test-store", "no-such-store", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := stowage.OpenCheckpointStorage(ctx, c2, quietLogger()); err == nil {
		s.Close()
		t.Fatal("built an unregistered storage type")
	} else {
		for _, w := range append([]string{"seatunnel.engine.checkpoint.storage.type", `"no-such-store"`}, checkpoint.Registered()...) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %s", err, w)
			}
		}
	}
}

// cmdTestStoreOpts receives what the "cmd-test-store" factory is given.
var cmdTestStoreOpts = make(chan checkpoint.FactoryOptions, 1)

func init() {
	checkpoint.Register("cmd-test-store", func(ctx context.Context, opts checkpoint.FactoryOptions) (checkpoint.Storage, error) {
		select {
		case cmdTestStoreOpts <- opts:
		default: // only the first call is looked at
		}
		return checkpoint.Open(ctx, checkpoint.Options{FS: memfs.New(), Namespace: opts.Namespace, MaxRetained: opts.MaxRetained})
	})
}
