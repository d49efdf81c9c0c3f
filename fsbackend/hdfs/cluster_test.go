package hdfs_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

// The fixture testdata/hdfs/start.sh exports these.
const (
	envHDFS   = "STOWAGE_TEST_HDFS"
	envCtl    = "STOWAGE_TEST_HDFS_CTL"
	envHA     = "STOWAGE_TEST_HDFS_HA"
	envHANS   = "STOWAGE_TEST_HDFS_HA_NS"
	envHACtl  = "STOWAGE_TEST_HDFS_HA_CTL"
	envHAConf = "STOWAGE_TEST_HDFS_HA_CONF"
)

func need(t testing.TB, vars ...string) {
	t.Helper()
	for _, v := range vars {
		if os.Getenv(v) == "" {
			t.Skipf("%s is not set: start the fixture with eval \"$(bash testdata/hdfs/start.sh)\" (and start.sh ha for HA tests)", v)
		}
	}
}

// uniqueDir is a fresh top-level directory name for one test.
func uniqueDir(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return "stowage-test/" + name + "-" + hex.EncodeToString(b[:])
}

// clusterProps are the properties of the single-NameNode fixture.
func clusterProps(kv ...string) fsbackend.Properties {
	p := fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "hdfs://" + os.Getenv(envHDFS)}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

// openRaw opens the whole cluster; it is closed when the test ends.
func openRaw(t testing.TB, p fsbackend.Properties) *hdfs.FS {
	t.Helper()
	f, err := hdfs.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("Open(%v): %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// openTest opens the single-NameNode fixture below a directory of its own.
func openTest(t testing.TB, kv ...string) (fsbackend.FS, *hdfs.FS, string) {
	t.Helper()
	need(t, envHDFS, envCtl)
	raw := openRaw(t, clusterProps(kv...))
	dir := uniqueDir(t)
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	return sub, raw, dir
}

// ctl sends one command to the fixture's control port and returns the
// text after "ok".
func ctl(t testing.TB, envAddr, cmd string) string {
	t.Helper()
	rest, err := ctlSend(envAddr, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return rest
}

// ctlSend is ctl that returns its error instead of failing the test (it
// may run outside the test goroutine).
func ctlSend(envAddr, cmd string) (string, error) {
	conn, err := net.DialTimeout("tcp", os.Getenv(envAddr), 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("control %s: %w", cmd, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Minute))
	if _, err := fmt.Fprintln(conn, cmd); err != nil {
		return "", fmt.Errorf("control %s: %w", cmd, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("control %s: %w", cmd, err)
	}
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, "ok")
	if !ok {
		return "", fmt.Errorf("control %s: %s", cmd, line)
	}
	return strings.TrimSpace(rest), nil
}

// openLogged opens the single-NameNode fixture with its debug records
// going to h, below a directory of its own.
func openLogged(t testing.TB, h slog.Handler) fsbackend.FS {
	t.Helper()
	raw, err := hdfs.OpenWithOptions(context.Background(), clusterProps(), hdfs.Options{Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	f, err := fsbackend.Sub(raw, uniqueDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t testing.TB, f fsbackend.FS, name string, data []byte) {
	t.Helper()
	if err := fsbackend.WriteFile(context.Background(), f, name, data); err != nil {
		t.Fatalf("WriteFile(%s): %v", name, err)
	}
}

func readFile(t testing.TB, f fsbackend.FS, name string) []byte {
	t.Helper()
	b, err := fsbackend.ReadFile(context.Background(), f, name)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", name, err)
	}
	return b
}
