// Package golden compares test output with golden files, and rewrites
// them when the test binary runs with -update. A golden file makes a
// format change a visible diff: rewriting one must be deliberate.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Check fails t unless got equals the file at path byte for byte; with
// -update it first writes got there. what says what a difference means
// (for example "a hash change"), for the failure message.
func Check(t testing.TB, path string, got []byte, what string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if text(got) && text(want) {
		t.Fatalf("%s differs (%s must be deliberate; rerun with -update):\n got:\n%s\nwant:\n%s", path, what, got, want)
	}
	t.Fatalf("%s differs (%s must be deliberate; rerun with -update):\n got %x\nwant %x", path, what, got, want)
}

// text reports whether b reads as text: valid UTF-8 without control
// characters other than newline and tab.
func text(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
