package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is a `stowage node` process started by demo, bench and tests.
type child struct {
	cmd  *exec.Cmd
	addr string // host:port of its HTTP API
	logs *os.File
}

// childEnv is set for a node re-executed from a test binary.
var childEnv []string

// startNode starts `stowage node --config-dir dir` with the flags args
// and waits until it listens; its log goes to logPath.
func startNode(ctx context.Context, dir, logPath string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startNodeCommand(ctx, logPath, append([]string{exe, "node", "--config-dir", dir, "--http", "127.0.0.1:0"}, args...))
}

// startNodeCommand starts argv, a command that runs `stowage node` (the
// executable itself, or a wrapper such as `ip netns exec NS` that execs
// it), and waits until the node listens; its log goes to logPath.
func startNodeCommand(ctx context.Context, logPath string, argv []string) (*child, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), childEnv...)
	dieWithParent(cmd)
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	c := &child{cmd: cmd, logs: lf}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
				addrc <- a
			} else if a, ok := strings.CutPrefix(sc.Text(), "listening on https://"); ok {
				addrc <- a
			}
		}
		close(addrc)
		io.Copy(io.Discard, out)
	}()
	select {
	case a, ok := <-addrc:
		if !ok {
			c.kill()
			tail, _ := os.ReadFile(logPath)
			if len(tail) > 2000 {
				tail = tail[len(tail)-2000:]
			}
			return nil, fmt.Errorf("node exited before listening; %s ends:\n%s", logPath, tail)
		}
		c.addr = a
	case <-time.After(30 * time.Second):
		c.kill()
		return nil, fmt.Errorf("node did not listen within 30s; see %s", logPath)
	case <-ctx.Done():
		c.kill()
		return nil, ctx.Err()
	}
	return c, nil
}

// waitHealthy polls /healthz until 200 and returns how long it took.
func (c *child) waitHealthy(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(limit)
	last := "no answer"
	for {
		resp, err := http.Get("http://" + c.addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("node at %s not healthy within %s (last: %s)", c.addr, limit, last)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL and reaps the process.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
	c.logs.Close()
}

// stop sends SIGTERM and waits.
func (c *child) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	err := c.cmd.Wait()
	c.logs.Close()
	return err
}

// netSpec says how the members started from one config directory find
// each other. The zero value makes a member alone: no join, no sockets.
type netSpec struct {
	Port    int // first member port; members take the next free one (auto-increment)
	Ports   int // how many ports the member list spans (default 10)
	MinSize int // hazelcast.initial.min.cluster.size (default 1)
	Backups int // seatunnel.engine.backup-count (default 1)
	// SSL is the hazelcast.network.ssl block, indented under network;
	// "" for none.
	SSL string
	// TransportPort is stowage.transport.port; 0 picks a free one.
	TransportPort int
}

// writeConfigDir writes a SeaTunnel config directory whose engine* maps
// (and checkpoints) persist EAGERly under dataDir on the local disk, for
// a member alone.
func writeConfigDir(dir, dataDir, cluster string) error {
	return writeConfigDirOn(dir, cluster, filepath.Join(dataDir, "imap"), filepath.Join(dataDir, "checkpoint")+"/", netSpec{},
		map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
}

// writeConfigDirOn writes a SeaTunnel config directory whose engine* maps
// persist below imapNS and the checkpoints below checkpointNS (absolute
// paths) on the storage that props describe (storage.type, fs.defaultFS
// and any key of that back end); net says how members join.
func writeConfigDirOn(dir, cluster, imapNS, checkpointNS string, net netSpec, props map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	block := func(indent string) string {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s%s: %s\n", indent, strconv.Quote(k), strconv.Quote(props[k]))
		}
		return b.String()
	}
	backups := net.Backups
	if backups == 0 {
		backups = 1
	}
	seatunnel := `seatunnel:
  engine:
    backup-count: ` + strconv.Itoa(backups) + `
    checkpoint:
      interval: 10000
      timeout: 60000
      storage:
        type: hdfs
        max-retained: 3
        plugin-config:
          namespace: ` + strconv.Quote(checkpointNS) + `
` + block("          ")
	join := "      tcp-ip:\n        enabled: false\n"
	port := "    port:\n      auto-increment: false\n      port: 5801\n"
	properties := ""
	if net.Port != 0 {
		n := net.Ports
		if n == 0 {
			n = 10
		}
		join = fmt.Sprintf("      tcp-ip:\n        enabled: true\n        member-list:\n          - 127.0.0.1:%d-%d\n", net.Port, net.Port+n-1)
		port = fmt.Sprintf("    port:\n      auto-increment: true\n      port-count: %d\n      port: %d\n", n, net.Port)
		properties = fmt.Sprintf("  properties:\n    hazelcast.initial.min.cluster.size: %d\n", max(1, net.MinSize))
		if net.TransportPort != 0 {
			properties += fmt.Sprintf("    stowage.transport.port: %d\n", net.TransportPort)
		}
	}
	hazelcast := `hazelcast:
  cluster-name: ` + cluster + `
  network:
    join:
` + join + port + net.SSL + properties + `  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        factory-class-name: org.apache.seatunnel.engine.server.persistence.FileMapStoreFactory
        properties:
          type: hdfs
          namespace: ` + strconv.Quote(imapNS) + `
          clusterName: ` + cluster + `
` + block("          ")
	if err := os.WriteFile(filepath.Join(dir, "seatunnel.yaml"), []byte(seatunnel), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "hazelcast.yaml"), []byte(hazelcast), 0o644)
}

// freeMemberPorts returns the first of n consecutive ports on 127.0.0.1
// that were free for both TCP and UDP (memberlist binds both) a moment
// ago.
func freeMemberPorts(n int) (int, error) {
	for attempt := 0; attempt < 100; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		base := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if base+n > 65000 {
			continue
		}
		ok := true
		for p := base; p < base+n && ok; p++ {
			a := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
			tl, err := net.Listen("tcp", a)
			if err != nil {
				ok = false
				break
			}
			ul, err := net.ListenPacket("udp", a)
			tl.Close()
			if err != nil {
				ok = false
				break
			}
			ul.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free range of member ports on 127.0.0.1")
}
