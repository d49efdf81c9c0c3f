package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// Without java or mvn on PATH, --peers says what is missing and succeeds
// without measuring anything.
func TestBenchPeersSkipsWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	err := runBench(context.Background(), []string{"--peers", "--dir", t.TempDir()}, &out, io.Discard)
	if err != nil {
		t.Fatalf("bench --peers without java: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "peers bench skipped: java not found on PATH") {
		t.Fatalf("bench --peers without java printed %q", got)
	}
}

func TestBenchPeersRejectsZeroRounds(t *testing.T) {
	err := runBench(context.Background(), []string{"--peers", "--peers-rounds", "0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--peers-rounds 0") {
		t.Fatalf("bench --peers --peers-rounds 0: got %v", err)
	}
}

func TestPeersBenchCheck(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/x", nil }
	missing := func(name string) (string, error) {
		if name == "mvn" {
			return "", exec.ErrNotFound
		}
		return "/usr/bin/java", nil
	}
	for _, tc := range []struct {
		name string
		p    peersBench
		want string
	}{
		{"no mvn", peersBench{src: t.TempDir(), lookPath: missing}, "mvn not found"},
		{"no source", peersBench{lookPath: found}, "give --peers-src"},
		{"no pom", peersBench{src: t.TempDir(), lookPath: found}, "has no pom.xml"},
	} {
		err := tc.p.check()
		if !errors.Is(err, errPeersSkipped) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: check() = %v, want errPeersSkipped mentioning %q", tc.name, err, tc.want)
		}
	}
	p := peersBench{src: findPeersSrc(), lookPath: found}
	if err := p.check(); err != nil {
		t.Errorf("with the repository's bench/peers: check() = %v", err)
	}
	if _, _, _, _, err := (&peersBench{fsURI: "s3a://bucket/x"}).storage(); err == nil {
		t.Error("storage() accepted an s3a URI for --peers")
	}
}

// --peers-imap skips like --peers without java, without measuring.
func TestBenchPeersImapSkipsWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	err := runBench(context.Background(), []string{"--peers", "--peers-imap", "--dir", t.TempDir()}, &out, io.Discard)
	if err != nil {
		t.Fatalf("bench --peers --peers-imap without java: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "peers bench skipped: java not found on PATH") || strings.Contains(got, "IMap write-through") || strings.Contains(got, "EAGER load") {
		t.Fatalf("bench --peers --peers-imap without java printed %q", got)
	}
}

// --fs-write-only needs --fs.
func TestBenchFSWriteOnlyNeedsFS(t *testing.T) {
	err := runBench(context.Background(), []string{"--fs-write-only"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--fs-write-only needs --fs") {
		t.Fatalf("bench --fs-write-only without --fs: got %v", err)
	}
}
