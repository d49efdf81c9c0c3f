package logscrub_test

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"testing"

	"github.com/stowage/stowage/internal/logscrub"
)

func TestPaths(t *testing.T) {
	for in, want := range map[string]string{
		"open /var/lib/stowage/ns/c/m/META: file name too long": "open …/m/META: file name too long",
		`write "/a/b/c/d.log": no space`:                        `write "…/c/d.log": no space`,
		"file=/a/b/c":                                           "file=…/b/c",
		"/x: broken":                                            "…/x: broken",
		"no path here, only a/relative/one":                     "no path here, only a/relative/one",
	} {
		if got := logscrub.Paths(in); got != want {
			t.Errorf("Paths(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHandlerScrubsInfoAndAbove(t *testing.T) {
	var buf bytes.Buffer
	log := logscrub.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	perr := &fs.PathError{Op: "write", Path: "/srv/data/secret-layout/ns/m/log/0003.log", Err: errors.New("no space left on device")}
	log.With("dir", "/srv/data/secret-layout/ns").Warn("closing segment at /srv/data/secret-layout/ns/m/log/0003.log", "err", perr,
		slog.Group("store", "root", "/srv/data/secret-layout"))
	log.Info("plain", "file", "m/log/0003.log")
	log.Debug("debug keeps it", "file", "/srv/data/secret-layout/ns/m/log/0003.log")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), buf.String())
	}
	for _, l := range lines[:2] {
		if strings.Contains(l, "/srv/") {
			t.Errorf("an info-or-above line names a server path: %s", l)
		}
	}
	for _, want := range []string{"…/log/0003.log", "no space left on device", "dir=…/secret-layout/ns", "store.root=…/data/secret-layout"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("warn line lacks %q: %s", want, lines[0])
		}
	}
	if !strings.Contains(lines[1], "file=m/log/0003.log") {
		t.Errorf("a relative name was changed: %s", lines[1])
	}
	if !strings.Contains(lines[2], "/srv/data/secret-layout/ns/m/log/0003.log") {
		t.Errorf("a debug line lost its path: %s", lines[2])
	}
}
