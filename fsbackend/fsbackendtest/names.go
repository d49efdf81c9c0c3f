package fsbackendtest

import (
	"errors"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("InvalidNames", testInvalidNames)
	register("SpecialCharacters", testSpecialCharacters)
}

// invalidNames are rejected by fsbackend.ValidName. "" is valid for List
// (the root) and is tested for the other methods only.
var invalidNames = []string{
	"/abs", "/", "a/../b", "..", "../x", ".", "./a", "a/.", "a//b", "a/", "//",
	"a\x00b", "\x00", "a\\b",
}

func testInvalidNames(t *testing.T, e *env) {
	e.write("valid", []byte("v"))
	check := func(what, name string, err error) {
		t.Helper()
		if !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("%s(%q): %v, want an error matching ErrInvalidName", what, name, err)
		}
	}
	for _, name := range append([]string{""}, invalidNames...) {
		w, err := e.fs.Create(e.ctx, name)
		if err == nil {
			_ = w.Abort()
		}
		check("Create", name, err)
		r, err := e.fs.Open(e.ctx, name)
		if err == nil {
			_ = r.Close()
		}
		check("Open", name, err)
		_, err = e.fs.Stat(e.ctx, name)
		check("Stat", name, err)
		check("Remove", name, e.fs.Remove(e.ctx, name))
		check("Rename from", name, e.fs.Rename(e.ctx, name, "target"))
		check("Rename to", name, e.fs.Rename(e.ctx, "valid", name))
		check("WriteFile", name, fsbackend.WriteFile(e.ctx, e.fs, name, []byte("x")))
		if name != "" {
			_, err = e.fs.List(e.ctx, name)
			check("List", name, err)
		}
	}
	// Nothing was created or moved by the rejected calls.
	e.wantList("", "valid")
	e.wantContent("valid", []byte("v"))
}

// testSpecialCharacters uses valid names that object stores must escape
// in URLs and that shells and Hadoop paths treat specially.
func testSpecialCharacters(t *testing.T, e *env) {
	names := []string{
		"with space/file name.txt",
		"plus+sign",
		"percent%20encoded",
		"hash#mark",
		"question?mark=1&x=2",
		"colon:semi;comma,",
		"tilde~and'quote\"",
		"unicode/é-漢字-🙂",
		"brackets[1]{2}(3)",
		"star*",
	}
	for i, name := range names {
		e.write(name, pattern(10+i, byte(i)))
	}
	for i, name := range names {
		e.wantContent(name, pattern(10+i, byte(i)))
	}
	got := e.names("")
	if len(got) != len(names) {
		t.Fatalf("List(\"\") = %q, want the %d names written", got, len(names))
	}
	seen := map[string]bool{}
	for _, n := range got {
		seen[n] = true
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("List(\"\") lacks %q (got %q)", n, got)
		}
	}
	e.wantList("with space", "with space/file name.txt")
	e.wantList("unicode", "unicode/é-漢字-🙂")
	if err := e.fs.Rename(e.ctx, "hash#mark", "with space/re named?"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	e.wantContent("with space/re named?", pattern(13, 3))
	for _, name := range []string{"with space/re named?", "plus+sign", "percent%20encoded"} {
		if err := e.fs.Remove(e.ctx, name); err != nil {
			t.Fatalf("Remove(%q): %v", name, err)
		}
		e.wantMissing(name)
	}
}
