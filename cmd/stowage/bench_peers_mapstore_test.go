package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestHzMapStoreArgs(t *testing.T) {
	args := hzMapStoreArgs("/x/peers.jar", "hdfs://127.0.0.1:9000", "/ns/a", []string{"dfs.replication=1"}, "overwrite", 64, 500)
	at := slices.Index(args, "stowage.peers.HzMapStoreBench")
	if at < 0 || args[at-1] != "/x/peers.jar" {
		t.Fatalf("args %q: want -cp jar then HzMapStoreBench", args)
	}
	want := []string{"--mode", "overwrite", "--fs", "hdfs://127.0.0.1:9000", "--namespace", "/ns/a", "--value-size", "256",
		"--writers", "64", "--keys", "500", "--rounds", "10", "--hadoop", "dfs.replication=1"}
	if got := args[at+1:]; !slices.Equal(got, want) {
		t.Errorf("args after the class: %q, want %q", got, want)
	}
	args = hzMapStoreArgs("/x/peers.jar", "file:///", "/ns/b", nil, "load", 0, 2000)
	if got := args[slices.Index(args, "stowage.peers.HzMapStoreBench")+1:]; !slices.Equal(got[len(got)-2:], []string{"--entries", "2000"}) || slices.Contains(got, "--hadoop") {
		t.Errorf("load args %q: want --entries 2000 last and no --hadoop", got)
	}
	args = hzMapStoreArgs("/x/peers.jar", "file:///", "/ns/c", nil, "write", 1, 1000)
	if got := args[len(args)-4:]; !slices.Equal(got, []string{"--writers", "1", "--puts", "1000"}) {
		t.Errorf("write args end %q", got)
	}
}

func TestParseHzMapStore(t *testing.T) {
	out := "noise\n{\"system\":\"hazelcast+filemapstore\",\"workload\":\"write\",\"writers\":64,\"puts\":1280,\"puts_per_sec\":88.5}\n"
	r, err := parseHzMapStore([]byte(out))
	if err != nil || r.Workload != "write" || r.Writers != 64 || r.Value != 88.5 {
		t.Errorf("write line: %+v, %v", r, err)
	}
	r, err = parseHzMapStore([]byte(`{"workload":"load","entries":10,"loaded":8,"entries_per_sec":1234.5,"store_failures":2}`))
	if err != nil || r.Value != 1234.5 || r.Lost != 2 || r.StoreFailures != 2 {
		t.Errorf("load line: %+v, %v", r, err)
	}
	r, err = parseHzMapStore([]byte(`{"workload":"overwrite","disk_per_live":10.25}`))
	if err != nil || r.Value != 10.25 {
		t.Errorf("overwrite line: %+v, %v", r, err)
	}
	for _, bad := range []string{"", `{"workload":"write"}`, `{"workload":"scan","puts_per_sec":3}`, "{oops"} {
		if _, err := parseHzMapStore([]byte(bad)); err == nil {
			t.Errorf("parseHzMapStore(%q) accepted it", bad)
		}
	}
}

func TestMapStoreLinesAndRatios(t *testing.T) {
	rows := []mapStoreRow{
		{System: "stowage", Workload: "write", Writers: 1, Round: 1, Value: 300},
		{System: "hazelcast+filemapstore", Workload: "write", Writers: 1, Round: 1, Value: 100},
		{System: "seatunnel", Workload: "write", Writers: 1, Round: 1, Value: 150},
		{System: "stowage", Workload: "write", Writers: 64, Round: 1, Value: 6400},
		{System: "hazelcast+filemapstore", Workload: "write", Writers: 64, Round: 1, Value: 64},
		{System: "stowage", Workload: "load", Round: 1, Value: 100000},
		{System: "hazelcast+filemapstore", Workload: "load", Round: 1, Value: 2000, Lost: 2, StoreFailures: 2},
		{System: "stowage", Workload: "overwrite", Writers: 64, Round: 1, Value: 1.5},
		{System: "hazelcast+filemapstore", Workload: "overwrite", Writers: 64, Round: 1, Value: 12},
		{System: "stowage", Workload: "write", Writers: 1, Round: 2, Value: 500},
		{System: "stowage", Workload: "write", Writers: 1, Round: 3, Value: 400},
	}
	lines := mapStoreLines(rows)
	if len(lines) != 4 {
		t.Fatalf("mapStoreLines: %d lines, want 4: %+v", len(lines), lines)
	}
	if l := lines[0]; l.Writers != 1 || l.Stowage != 400 || l.Hz != 100 || l.Direct != 150 {
		t.Errorf("one writer: %+v, want stowage median 400, Hazelcast 100, direct 150", l)
	}
	if l := lines[1]; l.Writers != 64 || l.Direct != 0 {
		t.Errorf("64 writers: %+v", l)
	}
	if got := ratio("write", 400, 100); got != "4.00" {
		t.Errorf("write ratio %s, want 4.00", got)
	}
	if got := ratio("overwrite", 1.5, 12); got != "8.00" {
		t.Errorf("disk/live ratio %s, want 8.00 (Hazelcast's over stowage's)", got)
	}
	if got := ratio("load", 0, 12); got != "-" {
		t.Errorf("ratio with an unknown side %s, want -", got)
	}
	var out bytes.Buffer
	printMapStoreRatios(&out, rows, mapStoreSizes{Entries: 10_000, Keys: 500}, false)
	s := out.String()
	for _, want := range []string{"4.00", "2.67", "100.00", "50.00", "8.00", "EAGER load of 10000", "fdatasync", "one fsync per record", "round 1: hazelcast+filemapstore's EAGER load held 2 entries fewer than the 10000 written", "round 1, load: SeaTunnel's storage reported 2 writes"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}

// --peers-mapstore skips like --peers without java, without measuring.
func TestBenchPeersMapStoreSkipsWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	err := runBench(context.Background(), []string{"--peers", "--peers-mapstore", "--dir", t.TempDir()}, &out, io.Discard)
	if err != nil {
		t.Fatalf("bench --peers --peers-mapstore without java: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "peers bench skipped: java not found on PATH") || strings.Contains(got, "map store vs") {
		t.Fatalf("bench --peers --peers-mapstore without java printed %q", got)
	}
}
