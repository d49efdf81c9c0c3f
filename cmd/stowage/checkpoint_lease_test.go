package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
