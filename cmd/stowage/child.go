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
// persist EAGERly under dataDir on the local disk.
func writeConfigDir(dir, dataDir, cluster string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
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
          namespace: ` + filepath.Join(dataDir, "checkpoint") + `/
          storage.type: hdfs
          fs.defaultFS: file:///
`
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
      port: 5801
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        factory-class-name: org.apache.seatunnel.engine.server.persistence.FileMapStoreFactory
        properties:
          type: hdfs
          namespace: ` + filepath.Join(dataDir, "imap") + `
          clusterName: ` + cluster + `
          storage.type: hdfs
          fs.defaultFS: file:///
`
	if err := os.WriteFile(filepath.Join(dir, "seatunnel.yaml"), []byte(seatunnel), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "hazelcast.yaml"), []byte(hazelcast), 0o644)
}
