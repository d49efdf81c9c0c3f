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
)

func TestInspectCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
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
	st.Close()
	inspect := func(args ...string) (string, int) {
		var o, e bytes.Buffer
		code := run(append([]string{"inspect", "--config-dir", cfgDir, "--json", "checkpoints"}, args...), &o, &e)
		return o.String() + e.String(), code
	}
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
