package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestCrashSIGKILLOnHDFS is TestCrashSIGKILL with the map store and the
// checkpoints on the real HDFS of testdata/hdfs: a member process is
// killed with SIGKILL under concurrent writers, restarted and EAGER-loaded
// from HDFS, and every acknowledged write must be there.
func TestCrashSIGKILLOnHDFS(t *testing.T) {
	nn := os.Getenv("STOWAGE_TEST_HDFS")
	if nn == "" {
		t.Skip(`STOWAGE_TEST_HDFS is not set: start the fixture with eval "$(bash testdata/hdfs/start.sh)"`)
	}
	crashOnHDFS(t, os.Getenv("STOWAGE_TEST_HDFS_CONF"), map[string]string{"storage.type": "hdfs", "fs.defaultFS": "hdfs://" + nn})
}

// crashOnHDFS runs the SIGKILL rounds with the map store and checkpoints
// on the HDFS that props name; confDir (if set) becomes HADOOP_CONF_DIR.
// It returns the member's log.
func crashOnHDFS(t *testing.T, confDir string, props map[string]string) []byte {
	t.Helper()
	if confDir != "" {
		// The member reads core-site.xml and hdfs-site.xml from here, as a
		// SeaTunnel deployment does.
		t.Setenv("HADOOP_CONF_DIR", confDir)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	base := "/stowage-test/" + t.Name() + "-" + hex.EncodeToString(b[:])
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDirOn(cfgDir, "crashhdfs", base+"/imap", base+"/checkpoint/", netSpec{}, props); err != nil {
		t.Fatal(err)
	}
	wl := newWorkload("engine_crash_hdfs", 8, 40)
	var out bytes.Buffer
	res, err := crashRounds(context.Background(), cfgDir, filepath.Join(dir, "node.log"), wl, 3, &out)
	t.Log("\n" + out.String())
	if err != nil {
		if logs, rerr := os.ReadFile(filepath.Join(dir, "node.log")); rerr == nil {
			t.Logf("node.log:\n%s", logs)
		}
		t.Fatal(err)
	}
	if res.acks == 0 || res.checked == 0 {
		t.Fatalf("nothing was written or checked: %+v", res)
	}
	if res.lost != 0 {
		t.Fatalf("%d keys lost or wrong after SIGKILL on HDFS", res.lost)
	}

	// The map is on HDFS, readable with no member running.
	var o, e bytes.Buffer
	if code := run([]string{"inspect", "--config-dir", cfgDir, "maps"}, &o, &e); code != 0 || strings.TrimSpace(o.String()) != "engine_crash_hdfs" {
		t.Fatalf("inspect maps = %q, %q, %d", o.String(), e.String(), code)
	}
	logs, err := os.ReadFile(filepath.Join(dir, "node.log"))
	if err != nil {
		t.Fatal(err)
	}
	return append(logs, out.Bytes()...)
}
