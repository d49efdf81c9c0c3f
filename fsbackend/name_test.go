package fsbackend_test

import (
	"errors"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ok, dir bool // valid as a name; valid as a directory
	}{
		{"a", true, true},
		{"a/b/c.log", true, true},
		{"with space/é", true, true},
		{"..a/b..", true, true},
		{".hidden", true, true},
		{"", false, true},
		{"/a", false, false},
		{"a/", false, false},
		{"a//b", false, false},
		{".", false, false},
		{"..", false, false},
		{"a/./b", false, false},
		{"a/../b", false, false},
		{"a/..", false, false},
		{"a\x00b", false, false},
		{"a\\b", false, false},
	} {
		err := fsbackend.ValidName(tc.name)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, fsbackend.ErrInvalidName)) {
			t.Errorf("ValidName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
		err = fsbackend.ValidDir(tc.name)
		if (err == nil) != tc.dir || (err != nil && !errors.Is(err, fsbackend.ErrInvalidName)) {
			t.Errorf("ValidDir(%q) = %v, want ok %v", tc.name, err, tc.dir)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		elems []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b", "c"}, "a/b/c"},
		{[]string{"", "a", "", "b", ""}, "a/b"},
		{[]string{"/a/", "/b/"}, "a/b"},
		{[]string{"ns/", "cluster", "map/log"}, "ns/cluster/map/log"},
	} {
		if got := fsbackend.Join(tc.elems...); got != tc.want {
			t.Errorf("Join(%q) = %q, want %q", tc.elems, got, tc.want)
		}
	}
}
