package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/partition"
)

// openPTY opens a pseudo-terminal: what is written to tty is read from
// master.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pseudo-terminal: %v", err)
	}
	return m, s
}

// onTerminal runs `stowage inspect ARGS` with stderr on a terminal and
// returns stdout, what reached the terminal, and the exit status.
func onTerminal(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	m, tty := openPTY(t)
	defer m.Close()
	var term bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&term, m) // until the terminal is closed (EIO)
	}()
	var o bytes.Buffer
	code := run(append([]string{"inspect"}, args...), &o, tty)
	tty.Close()
	<-done
	return o.String(), term.String(), code
}

// TestInspectProgressOnTerminal: stats, dump, get, compact and verify
// draw a progress bar on a terminal, and never with --json, whose output
// stays pure JSON.
func TestInspectProgressOnTerminal(t *testing.T) {
	ns, cluster, name := filepath.Join(t.TempDir(), "imap"), "c1", "engine_progress"
	writeFileMap(t, ns, cluster, name, 300)
	args := []string{"--fs", "file:///", "--namespace", ns, "--cluster", cluster}
	for _, cmd := range [][]string{
		{"stats", name},
		{"dump", name},
		{"get", name, "key-0007"},
		{"verify"},
		{"compact", name},
	} {
		what := strings.Join(cmd[:min(2, len(cmd))], " ")
		t.Run(cmd[0], func(t *testing.T) {
			o, term, code := onTerminal(t, append(args, cmd...)...)
			if code != 0 {
				t.Fatalf("%s exited %d: %s%s", what, code, o, term)
			}
			if !strings.Contains(term, what) || !strings.Contains(term, "%") {
				t.Errorf("%s drew no progress bar on the terminal: %q", what, term)
			}
			if strings.Contains(o, what+" ") && strings.Contains(o, "%") {
				t.Errorf("%s drew its progress bar on stdout: %q", what, o)
			}
			o, term, code = onTerminal(t, append(append(args, "--json"), cmd...)...)
			if code != 0 {
				t.Fatalf("%s --json exited %d: %s%s", what, code, o, term)
			}
			if strings.Contains(term, "%") || strings.Contains(term, what) {
				t.Errorf("%s --json drew a progress bar: %q", what, term)
			}
			if !json.Valid([]byte(o)) {
				t.Errorf("%s --json printed something else than JSON: %q", what, o)
			}
		})
	}
}

// TestInspectBBoltProgressOnTerminal: stats and dump of a bbolt map draw
// the same progress bar on a terminal, and none with --json.
func TestInspectBBoltProgressOnTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	s, err := boltstore.Open(path, boltstore.Options{MapName: "engine_b"})
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("job-1")
	if err := s.Store(t.Context(), mapstore.Record{Partition: partition.Of(k, partition.DefaultCount), Version: mapstore.Version{Epoch: 1, Seq: 1}, Key: k, Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, cmd := range []string{"stats", "dump"} {
		o, term, code := onTerminal(t, "--bbolt", path, cmd, "engine_b")
		if code != 0 || !strings.Contains(term, cmd+" engine_b") || !strings.Contains(term, "%") {
			t.Errorf("%s of a bbolt map on a terminal: exit %d, terminal %q, stdout %q", cmd, code, term, o)
		}
		o, term, code = onTerminal(t, "--bbolt", path, "--json", cmd, "engine_b")
		if code != 0 || term != "" || !json.Valid([]byte(o)) {
			t.Errorf("%s --json of a bbolt map: exit %d, terminal %q, stdout %q", cmd, code, term, o)
		}
	}
}
