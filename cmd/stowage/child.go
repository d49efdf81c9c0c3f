package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// startNode starts `stowage node --config-dir dir` and waits until it
// listens; its log goes to logPath.
func startNode(ctx context.Context, dir, logPath string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "node", "--config-dir", dir, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), childEnv...)
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
			}
		}
		close(addrc)
		io.Copy(io.Discard, out)
	}()
	select {
	case a, ok := <-addrc:
		if !ok {
			c.kill()
			return nil, fmt.Errorf("node exited before listening; see %s", logPath)
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
	for {
		resp, err := http.Get("http://" + c.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("node at %s not healthy within %s", c.addr, limit)
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

// writeConfigDir writes a SeaTunnel config directory whose engine* maps
// (and checkpoints) persist EAGERly under dataDir on the local disk.
func writeConfigDir(dir, dataDir, cluster string) error {
	return writeConfigDirOn(dir, cluster, filepath.Join(dataDir, "imap"), filepath.Join(dataDir, "checkpoint")+"/", 5801,
		map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
}

// writeConfigDirOn writes a SeaTunnel config directory whose engine* maps
// persist below imapNS and the checkpoints below checkpointNS (absolute paths) on the storage that props describe
// (storage.type, fs.defaultFS and any key of that back end), and the member
// listens on port.
func writeConfigDirOn(dir, cluster, imapNS, checkpointNS string, port int, props map[string]string) error {
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
	seatunnel := `seatunnel:
  engine:
    backup-count: 1
    checkpoint:
      interval: 10000
      timeout: 60000
      storage:
        type: hdfs
        max-retained: 3
        plugin-config:
          namespace: ` + strconv.Quote(checkpointNS) + `
` + block("          ")
	hazelcast := `hazelcast:
  cluster-name: ` + cluster + `
  network:
    join:
      tcp-ip:
        enabled: true
        member-list:
          - 127.0.0.1
    port:
      auto-increment: false
      port: ` + strconv.Itoa(port) + `
  map:
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
