package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// benchReaped fails the test for every process cb started that is still
// running or was not waited for.
func benchReaped(t *testing.T, cb *clusterBench) {
	t.Helper()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if len(cb.live) != 0 {
		t.Errorf("%d member processes left running", len(cb.live))
	}
	for _, c := range cb.started {
		if c.cmd.ProcessState == nil {
			t.Errorf("member process %d was not reaped", c.cmd.Process.Pid)
		}
	}
}

// benchChildProcesses lists the processes whose parent is this one (zombies
// included), from /proc.
func benchChildProcesses(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Skip("no /proc to list child processes")
	}
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...
		_, rest, ok := strings.Cut(string(b), ") ")
		if f := strings.Fields(rest); ok && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, strings.Fields(string(b))[0]+" "+f[0])
		}
	}
	return out
}

// `stowage bench --cluster-only` at a tiny size prints puts/s of one
// member and of three, their ratio, the same of members embedded in the
// bench process with their CPU per put, the fail-over run and its
// median, and leaves no process behind.
func TestBenchClusterSmoke(t *testing.T) {
	if ps := benchChildProcesses(t); len(ps) != 0 {
		t.Fatalf("child processes before the bench: %v", ps)
	}
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--cluster-only", "--quick", "--writers", "4", "--dir", t.TempDir()}, &out, &errb)
	t.Log("\n" + out.String())
	if ps := benchChildProcesses(t); len(ps) != 0 {
		t.Errorf("child processes left by the bench (pid state): %v", ps)
	}
	if code != 0 {
		t.Fatalf("bench exited %d: %s", code, errb.String())
	}
	for _, re := range []string{
		`(?m)^  one member +\d+ +1\.00$`,
		`(?m)^  3 members, backup-count 1 +\d+ +\d+\.\d\d `,
		`(?m)^  ratio \(aim: at least 0\.3\) by round: \d+\.\d\d \d+\.\d\d$`,
		`(?m)^  run 1: \d+\.\d\d s until every partition took a write; suspected (\d+\.\d\d s|-), declared dead \d+\.\d\d s, table without it \d+\.\d\d s`,
		`(?m)^  median \d+\.\d\d s over 1 runs`,
		`(?m)^  1 member\(s\), in memory +\d+ +\d+\.\d$`,
		`(?m)^  3 member\(s\), in memory +\d+ +\d+\.\d$`,
		`(?m)^  3 member\(s\), write-through, local disk +\d+ +\d+\.\d$`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output has no line matching %s", re)
		}
	}
}

// An interrupt while members are starting ends the section with the
// context's error and every process it started killed and reaped.
func TestBenchClusterInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	n := 0
	cb := &clusterBench{dir: t.TempDir(), writers: 2, perWriter: 2, valueSize: 16, failovers: 1, say: t.Logf,
		onStart: func(*child) {
			mu.Lock()
			defer mu.Unlock()
			if n++; n == 2 { // the first member of the 3-member cluster
				cancel()
			}
		}}
	_, err := cb.run(ctx, &bytes.Buffer{})
	benchReaped(t, cb)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run after cancel: %v, want context.Canceled", err)
	}
	if len(cb.started) < 2 {
		t.Fatalf("only %d processes started before the cancel", len(cb.started))
	}
}

func TestBenchSingleMemberSmoke(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--quick", "--cluster=false", "--writers", "4", "--load-entries", "2000", "--checkpoints", "100", "--checkpoint-size", "65536", "--dir", t.TempDir()}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"write-through / raw group commit", "one PutAll", "write-behind Map.Put", "EAGER load", "disk/live", "disk use of a metrics-style map", "within 2x live", "1 file(s) opened per lookup"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
