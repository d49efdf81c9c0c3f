package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// labHDFSIP is the address of the lab's HDFS on the bridge, beside the
// members' 10.77.0.1<i>.
const labHDFSIP = "10.77.0.100"

// hdfsFixture is the MiniDFSCluster launcher of testdata/hdfs as
// start.sh builds it: its directory and the build (class files and the
// Hadoop classpath resolved by Maven) for the current sources.
type hdfsFixture struct {
	dir, classes, classpath string
}

// findHDFSFixture finds java and the fixture's build, or skips the test:
// the test does not run Maven itself. start.sh (which scripts/test runs
// before the tests) caches the build in testdata/hdfs/.cache/<key>, the
// key being the first 16 hex digits of the SHA-256 of pom.xml followed by
// MiniHdfs.java.
func findHDFSFixture(t *testing.T) hdfsFixture {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("HDFS namespace test skipped: no java command (the MiniDFSCluster fixture needs Java 17)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hdfs"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	for _, name := range []string{"pom.xml", "MiniHdfs.java"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the HDFS fixture's sources: %v", err)
		}
		sum.Write(b)
	}
	build := filepath.Join(dir, ".cache", hex.EncodeToString(sum.Sum(nil))[:16])
	cp, err := os.ReadFile(filepath.Join(build, "classpath"))
	if _, serr := os.Stat(filepath.Join(build, "classes", "MiniHdfs.class")); err != nil || serr != nil || len(cp) == 0 {
		t.Skipf("HDFS namespace test skipped: the MiniDFSCluster fixture is not built for the current sources (no %s); "+
			"run `bash testdata/hdfs/start.sh` once (scripts/test does) to build it", build)
	}
	return hdfsFixture{dir: dir, classes: filepath.Join(build, "classes"), classpath: strings.TrimSpace(string(cp))}
}

// labHDFS is a MiniDFSCluster (one NameNode, one DataNode, one JVM)
// running in a namespace of its own on the lab's bridge, at labHDFSIP: the
// members reach the NameNode and the DataNode there.
type labHDFS struct {
	ns   string
	addr string // the NameNode, labHDFSIP:port
	dir  string
}

// startLabHDFS starts the fixture in a new namespace of lab and waits
// until it is ready. The JVM is killed when the test ends, before the
// namespaces are deleted, whatever the outcome; it also stops by itself
// when this process dies (its stdin closes, and the parent-death signal).
func startLabHDFS(t *testing.T, lab *netLab, fx hdfsFixture) *labHDFS {
	t.Helper()
	h := &labHDFS{ns: lab.addServer("hdfs", labHDFSIP, "bh"), dir: t.TempDir()}
	logPath := filepath.Join(h.dir, "minihdfs.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(h.dir, "ready")
	cmd := exec.Command("ip", "netns", "exec", h.ns, "java", "@"+filepath.Join(fx.dir, "jvm.options"),
		"-Dstowage.hdfs.host="+labHDFSIP, "-Dstowage.stdinWatch=true",
		"-Dlog4j.configuration=file:"+filepath.Join(fx.dir, "log4j.properties"), "-Dstowage.hdfs.log="+cmp.Or(os.Getenv("STOWAGE_HDFS_LOG"), "WARN"),
		"-cp", fx.classes+":"+fx.classpath,
		"MiniHdfs", "single", filepath.Join(h.dir, "data"), filepath.Join(h.dir, "conf"), ready)
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the MiniDFSCluster: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		stdin.Close()
		logf.Close()
		if t.Failed() {
			if keep := os.Getenv("STOWAGE_TEST_NODE_DEBUG"); keep != "" {
				b, _ := os.ReadFile(logPath)
				_ = os.WriteFile(filepath.Join(keep, t.Name()+"-minihdfs.log"), b, 0o600)
			}
			t.Logf("MiniDFSCluster log (tail):\n%s", fileTail(logPath, 4000))
		}
	})
	start := time.Now()
	deadline := time.NewTimer(3 * time.Minute)
	defer deadline.Stop()
	for {
		if b, err := os.ReadFile(ready); err == nil {
			for line := range strings.Lines(string(b)) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "export STOWAGE_TEST_HDFS="); ok {
					h.addr = v
				}
			}
			if !strings.HasPrefix(h.addr, labHDFSIP+":") {
				t.Fatalf("the MiniDFSCluster's ready file names the NameNode %q, not at %s:\n%s", h.addr, labHDFSIP, b)
			}
			t.Logf("MiniDFSCluster ready at %s in its namespace after %v", h.addr, time.Since(start).Round(100*time.Millisecond))
			return h
		}
		select {
		case <-exited:
			t.Fatalf("the MiniDFSCluster exited before it was ready:\n%s", fileTail(logPath, 4000))
		case <-deadline.C:
			t.Fatalf("the MiniDFSCluster was not ready within 3 minutes:\n%s", fileTail(logPath, 4000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// storage is the members' storage on this HDFS: the map store and the
// checkpoints under /stowage-netns.
func (h *labHDFS) storage() labStorage {
	return labStorage{imap: "/stowage-netns/imap", checkpoint: "/stowage-netns/checkpoint/",
		props: map[string]string{"storage.type": "hdfs", "fs.defaultFS": "hdfs://" + h.addr}}
}

// client is an HDFS client that dials the NameNode and the DataNode from
// the HDFS namespace, as the user running the test (the members' user).
func (h *labHDFS) client(t *testing.T) *gohdfs.Client {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	c, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{h.addr}, User: u.Username,
		NamenodeDialFunc: dialIn(h.ns), DatanodeDialFunc: dialIn(h.ns)})
	if err != nil {
		t.Fatalf("HDFS client for %s: %v", h.addr, err)
	}
	return c
}

// stored returns how many regular files under dir on the HDFS hold data,
// and their bytes (none if dir does not exist).
func (h *labHDFS) stored(t *testing.T, dir string) (files int, bytes int64) {
	t.Helper()
	c := h.client(t)
	defer c.Close()
	err := c.Walk(dir, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if fi.Mode().IsRegular() && fi.Size() > 0 {
			files++
			bytes += fi.Size()
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("listing %s on the HDFS at %s: %v", dir, h.addr, err)
	}
	return files, bytes
}

// fileTail is the end of the file at p, at most n bytes of it.
func fileTail(p string, n int) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestClusterNetworkPartitionMinority with the map store and the
// checkpoints on a real HDFS: a MiniDFSCluster in a namespace of its own
// on the bridge (10.77.0.100), its DataNode registered at that address so
// that the members dial it there. Member 3 is cut off twice: its link goes
// down (it loses the HDFS too), then it is cut off from the other members
// only, with the HDFS still in reach, where nothing but split-brain
// protection keeps it from writing. Each time it must stop acknowledging,
// the majority carries on and the three converge after the heal; the
// history is linearizable and every acknowledged write reads back. The
// map's files must be on the HDFS.
func TestClusterNetworkPartitionMinorityHDFS(t *testing.T) {
	fx := findHDFSFixture(t)
	var h *labHDFS
	pr := startPartitionRun(t, func(lab *netLab, _ string) labStorage {
		h = startLabHDFS(t, lab, fx)
		return h.storage()
	})
	mapDir := h.storage().imap
	partitionMinority(t, pr, linkDown, membersApart)
	files, bytes := h.stored(t, mapDir)
	t.Logf("the HDFS holds %d files, %d bytes under %s", files, bytes, mapDir)
	if files == 0 || bytes == 0 {
		t.Fatalf("the members wrote nothing to the HDFS under %s", mapDir)
	}
}
