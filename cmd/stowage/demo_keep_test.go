package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stowage demo --keep-running leaves its members serving the status page
// after the restart, and stops them on SIGINT.
func TestDemoKeepRunningServesThePageUntilInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "demo", "--dir", t.TempDir(), "--writers", "4", "--keep-running")
	cmd.Env = append(os.Environ(), childEnv...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var lines []string
	pagec := make(chan string, 1)
	var addrs []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l := sc.Text()
			lines = append(lines, l)
			if a, ok := strings.CutPrefix(l, "  member HTTP API: http://"); ok {
				addrs = append(addrs, strings.TrimSuffix(a, "/"))
			}
			if a, ok := strings.CutPrefix(l, "status page: http://"); ok {
				addrs = append(addrs, strings.TrimSuffix(a, "/"))
				pagec <- strings.TrimSuffix(a, "/")
			}
		}
	}()
	reaped := false
	defer func() {
		if !reaped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	go func() { <-readDone; exited <- cmd.Wait() }()

	var page string
	select {
	case page = <-pagec:
	case err := <-exited:
		reaped = true
		t.Fatalf("demo exited before printing the status page's address: %v\n%s", err, strings.Join(lines, "\n"))
	case <-time.After(4 * time.Minute):
		t.Fatal("demo printed no status page address within 4 minutes")
	}
	resp, err := http.Get("http://" + page + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `<script src="/ui/app.js">`) {
		t.Fatalf("GET / of %s: %s %.200s", page, resp.Status, body)
	}
	if len(addrs) != 3 {
		t.Fatalf("demo printed the addresses %v, want 3 members", addrs)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		reaped = true
		if err != nil {
			t.Fatalf("demo after SIGINT: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("demo did not exit within a minute of SIGINT")
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"every acknowledged write came back", "stowage inspect --config-dir", "members stopped."} {
		if !strings.Contains(all, want) {
			t.Errorf("demo output lacks %q:\n%s", want, all)
		}
	}
	for _, a := range addrs {
		if resp, err := http.Get("http://" + a + "/healthz"); err == nil {
			resp.Body.Close()
			t.Errorf("member %s still answers after the demo was interrupted", a)
		}
	}
}
