package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The README's first command: three members, one SIGKILLed under the
// writes, all SIGKILLed and restarted, every acknowledged write back.
func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	dir := t.TempDir()
	code := run([]string{"demo", "--dir", dir, "--writers", "8"}, &out, &errOut)
	t.Log("\n" + out.String())
	if code != 0 {
		// The members' logs say why a restart did not get healthy.
		logs, _ := filepath.Glob(filepath.Join(dir, "member-*.log"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil {
				t.Logf("%s, last lines:\n%s", filepath.Base(l), lastLines(string(b), 40))
			}
		}
		t.Fatalf("demo exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"started 3 members", "writes went on through the others", "0 wrong", "every acknowledged write came back"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("demo output lacks %q", want)
		}
	}
}
