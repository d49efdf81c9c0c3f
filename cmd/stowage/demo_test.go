package main

import (
	"bytes"
	"strings"
	"testing"
)

// The README's first command: three members, one SIGKILLed under the
// writes, all SIGKILLed and restarted, every acknowledged write back.
func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"demo", "--dir", t.TempDir(), "--writers", "8"}, &out, &errOut)
	t.Log("\n" + out.String())
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"started 3 members", "writes went on through the others", "0 wrong", "every acknowledged write came back"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("demo output lacks %q", want)
		}
	}
}
