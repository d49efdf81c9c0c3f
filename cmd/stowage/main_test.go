package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/mapstore/boltstore"
)

// The test binary doubles as the stowage command for child processes.
func TestMain(m *testing.M) {
	if os.Getenv("STOWAGE_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	childEnv = []string{"STOWAGE_TEST_MAIN=1"}
	os.Exit(m.Run())
}

// A real member process is killed with SIGKILL at a random moment while
// writers are in the middle of writes, several rounds; after each restart
// every acknowledged write is there with its last acknowledged value (or
// the one in flight at the kill) and deletes stay deleted.
func TestCrashSIGKILL(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDir(cfgDir, filepath.Join(dir, "data"), "crash"); err != nil {
		t.Fatal(err)
	}
	wl := newWorkload("engine_crash", 16, 40)
	var out bytes.Buffer
	res, err := crashRounds(context.Background(), cfgDir, filepath.Join(dir, "node.log"), wl, 4, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.acks == 0 || res.checked == 0 {
		t.Fatalf("nothing was written or checked: %+v", res)
	}
	if res.lost != 0 {
		t.Fatalf("%d keys lost or wrong after SIGKILL", res.lost)
	}

	// The persisted state is readable with no member running.
	inspect := func(args ...string) (string, string, int) {
		var o, e bytes.Buffer
		code := run(append([]string{"inspect", "--config-dir", cfgDir}, args...), &o, &e)
		return o.String(), e.String(), code
	}
	o, e, code := inspect("maps")
	if code != 0 || strings.TrimSpace(o) != "engine_crash" {
		t.Fatalf("inspect maps = %q, %q, %d", o, e, code)
	}
	o, e, code = inspect("--json", "dump", "engine_crash")
	var dumped []dumpEntry
	if code != 0 || json.Unmarshal([]byte(o), &dumped) != nil {
		t.Fatalf("inspect dump: %d, %q", code, e)
	}
	present := 0
	for _, st := range wl.state {
		if !st.deleted {
			present++
		}
	}
	if len(dumped) != present {
		t.Fatalf("dump lists %d entries, the workload knows %d", len(dumped), present)
	}
	o, _, code = inspect("get", "engine_crash", dumped[0].Key)
	if code != 0 || strings.TrimSpace(o) != dumped[0].Value {
		t.Fatalf("inspect get = %q (%d), want %q", o, code, dumped[0].Value)
	}
	if _, _, code = inspect("get", "engine_crash", "no-such-key"); code != 1 {
		t.Fatalf("inspect get of a missing key exited %d, want 1", code)
	}
	if o, e, code = inspect("compact", "engine_crash"); code != 0 {
		t.Fatalf("inspect compact: %q %q", o, e)
	}
	o, e, code = inspect("--json", "stats", "engine_crash")
	var st struct {
		Entries  int64 `json:"entries"`
		LogFiles int   `json:"log_files"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &st) != nil || st.Entries != int64(present) || st.LogFiles != 0 {
		t.Fatalf("stats after compact = %s (%q, %d): want %d entries and no log files", o, e, code, present)
	}
	if o, e, code = inspect("verify"); code != 0 {
		t.Fatalf("verify of a clean map exited %d: %s %s", code, o, e)
	}
	// Damage a snapshot: verify names the file and exits 1.
	snaps, _ := filepath.Glob(filepath.Join(dir, "data", "imap", "crash", "engine_crash", "g*", "snap", "*", "*.snap"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot after compact")
	}
	data, _ := os.ReadFile(snaps[0])
	data[len(data)/2] ^= 0xFF
	os.WriteFile(snaps[0], data, 0o644)
	o, _, code = inspect("verify")
	if code != 1 || !strings.Contains(o, filepath.Base(snaps[0])) {
		t.Fatalf("verify of a damaged snapshot exited %d:\n%s", code, o)
	}
}

func TestUsageErrors(t *testing.T) {
	var o, e bytes.Buffer
	if code := run([]string{"frobnicate"}, &o, &e); code != 2 || !strings.Contains(e.String(), "unknown command") {
		t.Fatalf("unknown command: %d %q", code, e.String())
	}
	e.Reset()
	if code := run([]string{"node"}, &o, &e); code != 1 || !strings.Contains(e.String(), "--config-dir") {
		t.Fatalf("node without --config-dir: %d %q", code, e.String())
	}
	e.Reset()
	if code := run([]string{"inspect", "--fs", "ftp://x", "maps"}, &o, &e); code != 1 || !strings.Contains(e.String(), "ftp") {
		t.Fatalf("inspect with a bad --fs: %d %q", code, e.String())
	}
}

// The usage text names every flag of inspect, --bbolt and compact's
// --force included.
func TestUsageNamesInspectFlags(t *testing.T) {
	var o, e bytes.Buffer
	if code := run([]string{"help"}, &o, &e); code != 0 {
		t.Fatalf("help exited %d: %s", code, e.String())
	}
	for _, want := range []string{"--config-dir DIR", "--fs URI", "--namespace NS", "--cluster NAME", "--bbolt FILE", "--json", "compact [--force] MAP"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, o.String())
		}
	}
	// What the usage shows is accepted: compact --force MAP on a map
	// store of type bbolt says compaction is not needed.
	path := filepath.Join(t.TempDir(), "maps.db")
	st, err := boltstore.Open(path, boltstore.Options{MapName: "engine_x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	if code := run([]string{"inspect", "--bbolt", path, "compact", "--force", "engine_x"}, &o, &e); code != 0 || !strings.Contains(o.String(), "not needed") {
		t.Fatalf("inspect --bbolt FILE compact --force MAP: exit %d, %q %q", code, o.String(), e.String())
	}
}

// A second member process on the bbolt file of a running one fails at
// start, naming the file, even though the first one has not opened a map
// yet; the first one serves on, and once it stopped a member starts on
// the file and finds what was written.
func TestNodeBBoltFileLocked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "maps.db")
	cfgDir := filepath.Join(dir, "config")
	writeBoltConfig(t, cfgDir, path)
	first, err := startNode(ctx, cfgDir, filepath.Join(dir, "first.log"))
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
	second := exec.CommandContext(cctx, exe, "node", "--config-dir", cfgDir, "--http", "127.0.0.1:0")
	second.Env = append(os.Environ(), childEnv...)
	var o, e bytes.Buffer
	second.Stdout, second.Stderr = &o, &e
	err = second.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || cctx.Err() != nil {
		t.Fatalf("second node on a held bbolt file: %v (stdout %q, stderr %q); want exit 1 at start", err, o.String(), e.String())
	}
	if !strings.Contains(e.String(), "locked by another process") || !strings.Contains(e.String(), path) || strings.Contains(o.String(), "listening") {
		t.Fatalf("second node's error does not say the file is locked and name it: stdout %q, stderr %q", o.String(), e.String())
	}

	base := "http://" + first.addr + "/v1/maps/engine_jobs/entries/job-1"
	req, _ := http.NewRequest(http.MethodPut, base, strings.NewReader("state-1"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT to the first node: %s", resp.Status)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first node: %v", err)
	}

	again, err := startNode(ctx, cfgDir, filepath.Join(dir, "again.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer again.kill()
	if _, err := again.waitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get("http://" + again.addr + "/v1/maps/engine_jobs/entries/job-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "state-1" {
		t.Fatalf("after restart on the bbolt file job-1 = %s %q, want state-1", resp.Status, body)
	}
}
