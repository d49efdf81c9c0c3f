package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestHzMemberAndClientArgs(t *testing.T) {
	ports := []int{5801, 5802, 5803}
	m := hzMemberArgs("/x/peers.jar", "c1", 5802, ports)
	if m[0] != "-Xmx1g" {
		t.Errorf("member heap: args start %q, want -Xmx1g", m[0])
	}
	at := slices.Index(m, "stowage.peers.HzClusterMember")
	if at < 0 || m[at-1] != "/x/peers.jar" || m[at-2] != "-cp" {
		t.Fatalf("member args %q: want -cp jar then the member class", m)
	}
	want := []string{"--cluster", "c1", "--port", "5802", "--members", "127.0.0.1:5801,127.0.0.1:5802,127.0.0.1:5803"}
	if got := m[at+1:]; !slices.Equal(got, want) {
		t.Errorf("member args after the class: %q, want %q", got, want)
	}
	c := hzClientArgs("/x/peers.jar", "c1", ports, 64, 100000, 20000, 256)
	at = slices.Index(c, "stowage.peers.HzClusterClient")
	if at < 0 {
		t.Fatalf("client args %q: no client class", c)
	}
	want = []string{"--cluster", "c1", "--members", "127.0.0.1:5801,127.0.0.1:5802,127.0.0.1:5803", "--size", "3",
		"--writers", "64", "--puts", "100000", "--warmup", "20000", "--value-size", "256"}
	if got := c[at+1:]; !slices.Equal(got, want) {
		t.Errorf("client args after the class: %q, want %q", got, want)
	}
}

func TestParseHzClusterResult(t *testing.T) {
	r, err := parseHzClusterResult(`{"system":"hazelcast","members":3,"writers":64,"puts":100000,"puts_per_sec":4274.7,"p50_ms":6.2,"p90_ms":15.2}`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Members != 3 || r.Puts != 100000 || r.PerSec != 4274.7 || r.Kind != "client" {
		t.Errorf("parsed %+v", r)
	}
	for _, bad := range []string{`{"system":"hazelcast","members":3}`, `{"system":"seatunnel","members":1,"puts":1,"puts_per_sec":1}`, `{not json`} {
		if _, err := parseHzClusterResult(bad); err == nil {
			t.Errorf("parseHzClusterResult(%q) accepted it", bad)
		}
	}
}

func TestClusterRatios(t *testing.T) {
	rows := []clusterRow{
		{System: "stowage", Kind: "embedded", Members: 1, Round: 1, PerSec: 100, CPUUS: 10},
		{System: "hazelcast", Kind: "client", Members: 1, Round: 1, PerSec: 50, CPUUS: 40},
		{System: "hazelcast", Kind: "client", Members: 3, Round: 1, PerSec: 20, CPUUS: 200},
		{System: "stowage", Kind: "embedded", Members: 3, Round: 1, PerSec: 60, CPUUS: 30},
		{System: "stowage", Kind: "embedded", Members: 3, Round: 2, PerSec: 80, CPUUS: 30},
		{System: "stowage", Kind: "embedded-wt", Members: 3, Round: 1, PerSec: 45, CPUUS: 50},
		{System: "stowage", Kind: "http", Members: 3, Round: 1, PerSec: 30, CPUUS: 100},
		{System: "stowage", Kind: "http-routed", Members: 3, Round: 1, PerSec: 40, CPUUS: 90},
		{System: "stowage", Kind: "http-mem", Members: 3, Round: 1, PerSec: 50, CPUUS: 80},
		{System: "stowage", Kind: "http-routed-mem", Members: 3, Round: 1, PerSec: 55, CPUUS: 70},
		// Round 2, and a round 3 so that the median is the middle one.
		{System: "stowage", Kind: "embedded", Members: 1, Round: 2, PerSec: 300, CPUUS: 20},
		{System: "stowage", Kind: "embedded", Members: 1, Round: 3, PerSec: 200, CPUUS: 30},
		{System: "hazelcast", Kind: "client", Members: 1, Round: 2, PerSec: 70, CPUUS: 60},
		{System: "hazelcast", Kind: "client", Members: 1, Round: 3, PerSec: 60, CPUUS: 50},
	}
	got := clusterRatios(rows)
	if len(got) != 7 {
		t.Fatalf("clusterRatios: %d rows, want 7: %+v", len(got), got)
	}
	one := got[0]
	if one.Members != 1 || one.PerSec != 200 || one.HzPerSec != 60 || one.CPUUS != 20 || one.HzCPUUS != 50 {
		t.Errorf("one member: %+v, want medians 200 vs 60 puts/s, 20 vs 50 µs", one)
	}
	if got[1].Members != 3 || got[1].HzPerSec != 20 || got[1].PerSec != 70 || !strings.Contains(got[1].Label, "embedded") {
		t.Errorf("3 embedded: %+v, want puts/s 70, the mean of two rounds' 60 and 80", got[1])
	}
	if got[1].Label != "3 member(s) embedded, in memory" {
		t.Errorf("3 embedded in memory labelled %q", got[1].Label)
	}
	if got[2].Members != 3 || got[2].PerSec != 45 || got[2].HzPerSec != 20 || got[2].Label != "3 member(s) embedded, write-through to local disk" {
		t.Errorf("3 embedded write-through: %+v", got[2])
	}
	if got[3].Members != 3 || got[3].PerSec != 30 || !strings.Contains(got[3].Label, "HTTP") || !strings.Contains(got[3].Label, "write-through") {
		t.Errorf("3 over HTTP: %+v", got[3])
	}
	if got[4].PerSec != 40 || got[4].Label != "3 member processes over HTTP to the owner, write-through to local disk" {
		t.Errorf("3 over HTTP to the owner: %+v", got[4])
	}
	if got[5].PerSec != 50 || got[5].CPUUS != 80 || got[5].Label != "3 member processes over HTTP, in memory" {
		t.Errorf("3 over HTTP in memory: %+v", got[5])
	}
	if got[6].PerSec != 55 || got[6].HzPerSec != 20 || got[6].Label != "3 member processes over HTTP to the owner, in memory" {
		t.Errorf("3 over HTTP to the owner in memory: %+v", got[6])
	}
	var out bytes.Buffer
	printClusterRatios(&out, rows)
	if s := out.String(); !strings.Contains(s, "3.33") || !strings.Contains(s, "0.40") {
		t.Errorf("ratio table lacks 200/60 = 3.33 and 20/50 = 0.40:\n%s", s)
	}
	if r := got[0].PerSec / got[0].HzPerSec; math.Abs(r-3.333) > 0.01 {
		t.Errorf("ratio %v", r)
	}
}

// --peers-cluster skips like --peers without java, without measuring.
func TestBenchPeersClusterSkipsWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	err := runBench(context.Background(), []string{"--peers", "--peers-cluster", "--dir", t.TempDir()}, &out, io.Discard)
	if err != nil {
		t.Fatalf("bench --peers --peers-cluster without java: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "peers bench skipped: java not found on PATH") || strings.Contains(got, "cluster ceiling") {
		t.Fatalf("bench --peers --peers-cluster without java printed %q", got)
	}
}

func TestBenchPeersClusterRejectsFewPuts(t *testing.T) {
	err := runBench(context.Background(), []string{"--peers", "--peers-cluster", "--peers-puts", "10", "--dir", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--peers-puts 10") {
		t.Fatalf("bench --peers --peers-cluster --peers-puts 10: got %v", err)
	}
}

// One Hazelcast member and its client, through the harness: a result with
// puts/s and the member's CPU per put, and no process left behind. Needs
// java and mvn (skipped otherwise, as the other peers tests are).
func TestPeersHzClusterOneMember(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	p := &peersBench{src: findPeersSrc(), dir: t.TempDir(), rounds: 1, lookPath: exec.LookPath, say: t.Logf}
	if err := p.check(); err != nil {
		t.Skip(err)
	}
	if ps := benchChildProcesses(t); len(ps) != 0 {
		t.Fatalf("child processes before the test: %v", ps)
	}
	ctx := context.Background()
	jar, err := p.jar(ctx)
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.hzCluster(ctx, jar, p.dir, 1, 1, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if row.System != "hazelcast" || row.Members != 1 || row.Puts != 2000 || row.PerSec <= 0 || row.Round != 1 {
		t.Errorf("row %+v", row)
	}
	if row.CPUUS <= 0 {
		t.Errorf("member CPU per put %v: want it read from /proc", row.CPUUS)
	}
	if ps := benchChildProcesses(t); len(ps) != 0 {
		t.Errorf("processes left behind: %v", ps)
	}
}
