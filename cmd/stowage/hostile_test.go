package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/stowage/stowage/cluster"
)

// Member processes with hazelcast.network.ssl on, against peers that are
// not members: a client without the credential, one with another secret,
// a whole member process with another secret, and a bare memberlist node
// that publishes the right cluster name. None gets in; the cluster keeps
// serving.

const hostileCluster = "guarded"

func sslBlock(secretFile string) string {
	return "    ssl:\n      enabled: true\n      properties:\n        cluster-secret-file: " + strconv.Quote(secretFile) + "\n"
}

func writeSecret(t *testing.T, dir, name, secret string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// guardedMember starts one member from its own config directory. It may
// run on a goroutine of its own: it reports errors rather than failing.
func guardedMember(t *testing.T, dir, data string, i int, spec netSpec) (*child, error) {
	cfg := filepath.Join(dir, fmt.Sprintf("config-%d", i))
	err := writeConfigDirOn(cfg, hostileCluster, filepath.Join(dir, data, "imap"), filepath.Join(dir, data, "checkpoint")+"/",
		spec, map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, fmt.Sprintf("member-%d.log", i))
	c, err := startNode(context.Background(), cfg, logPath)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("member %d log (tail):\n%s", i, b)
		}
	})
	return c, nil
}

func clusterMembers(t *testing.T, c *child) []string {
	t.Helper()
	resp, err := http.Get("http://" + c.addr + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Members []string `json:"members"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.Members
}

func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHostilePeersRefused(t *testing.T) {
	dir := t.TempDir()
	base, err := freeMemberPorts(10)
	if err != nil {
		t.Fatal(err)
	}
	secret := writeSecret(t, dir, "cluster.secret", "0f1e2d3c4b5a69788796a5b4c3d2e1f0-guarded")
	tports := []int{freeTCPPort(t), freeTCPPort(t)}
	var ms []*child
	type result struct {
		c   *child
		err error
	}
	started := make(chan result, 2)
	for i, tp := range tports {
		go func() {
			c, err := guardedMember(t, dir, "data", i+1, netSpec{Port: base, Ports: 10, MinSize: 2, SSL: sslBlock(secret), TransportPort: tp})
			started <- result{c, err}
		}()
	}
	for range tports {
		r := <-started
		if r.err != nil {
			t.Fatal(r.err)
		}
		ms = append(ms, r.c)
	}
	for _, m := range ms {
		if _, err := m.waitHealthy(context.Background(), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := httpDo(t, http.MethodPut, "http://"+ms[0].addr+"/v1/maps/engine_jobs/entries/k1", "v1"); code != http.StatusNoContent {
		t.Fatalf("put: %d %s", code, body)
	}

	// Clients of the member transport without the credential: nothing is
	// answered, whatever the method.
	other := writeSecret(t, dir, "other.secret", "another secret of another cluster!")
	for name, sec := range map[string]*cluster.Security{
		"no TLS":       nil,
		"wrong secret": {Secret: []byte("another secret of another cluster!")},
	} {
		tr, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{Security: sec, DialTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"op", "scan", "table", "gettab", "take", "fill", "release", "backup"} {
			for _, tp := range tports {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				b, err := tr.Call(ctx, "127.0.0.1:"+strconv.Itoa(tp), method, []byte{1, 0})
				cancel()
				if err == nil || cluster.IsRemote(err) {
					t.Errorf("%s: %s to transport port %d: answered (%q, %v)", name, method, tp, b, err)
				}
			}
		}
		tr.Close()
	}

	// A member process with another secret starts alone; the cluster
	// does not take it in.
	intruder, err := guardedMember(t, dir, "intruder-data", 3, netSpec{Port: base, Ports: 10, MinSize: 1, SSL: sslBlock(other)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intruder.waitHealthy(context.Background(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	// A bare memberlist node with the right cluster name in its metadata.
	mc := memberlist.DefaultLANConfig()
	mc.Name = "raw-intruder"
	mc.BindAddr, mc.BindPort = "127.0.0.1", 0
	mc.LogOutput = io.Discard
	mc.Delegate = rawMeta(rawStowageMeta(hostileCluster))
	raw, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Shutdown()
	_, _ = raw.Join([]string{"127.0.0.1:" + strconv.Itoa(base), "127.0.0.1:" + strconv.Itoa(base+1)})

	// Several rejoin rounds (every 10 s by default) of the intruders.
	time.Sleep(12 * time.Second)
	for i, m := range ms {
		if got := clusterMembers(t, m); len(got) != 2 {
			t.Errorf("member %d sees %v, want the 2 members", i+1, got)
		}
	}
	if got := clusterMembers(t, intruder); len(got) != 1 {
		t.Errorf("the member with another secret sees %v, want itself alone", got)
	}
	if n := raw.NumMembers(); n != 1 {
		t.Errorf("the bare memberlist node sees %d nodes, want itself alone", n)
	}
	// The cluster serves on.
	for _, m := range ms {
		if code, body := httpDo(t, http.MethodGet, "http://"+m.addr+"/v1/maps/engine_jobs/entries/k1", ""); code != http.StatusOK || !strings.Contains(body, "v1") {
			t.Errorf("get through %s: %d %s", m.addr, code, body)
		}
	}
	if code, body := httpDo(t, http.MethodPut, "http://"+ms[1].addr+"/v1/maps/engine_jobs/entries/k2", "v2"); code != http.StatusNoContent {
		t.Errorf("put after the intruders: %d %s", code, body)
	}
}

// rawMeta is a memberlist delegate publishing fixed metadata.
type rawMeta []byte

func (r rawMeta) NodeMeta(int) []byte             { return r }
func (rawMeta) NotifyMsg([]byte)                  {}
func (rawMeta) GetBroadcasts(int, int) [][]byte   { return nil }
func (rawMeta) LocalState(bool) []byte            { return nil }
func (rawMeta) MergeRemoteState(_ []byte, _ bool) {}

// rawStowageMeta forges a stowage member's metadata (version 2 layout:
// version, flags, start, cluster name, transport address, run id).
func rawStowageMeta(name string) []byte {
	b := []byte{2, 0}
	var start [8]byte
	ns := uint64(time.Now().Add(-time.Hour).UnixNano())
	for i := 7; i >= 0; i-- {
		start[i] = byte(ns)
		ns >>= 8
	}
	b = append(b, start[:]...)
	b = append(b, byte(len(name)))
	b = append(b, name...)
	rpc := "127.0.0.1:1"
	b = append(b, byte(len(rpc)))
	b = append(b, rpc...)
	return append(b, "raw"...)
}
