package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	"github.com/vmihailenco/msgpack/v5"
)

// vmSize reads a process's virtual memory size in KiB from /proc.
func vmSize(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmSize %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmSize in /proc status")
	return 0
}

// TestOversizedFrameHeaderAllocatesNothingLarge: frames that announce a
// body of the largest size a message may have, and send none of it, on
// several streams at once, leave a member's memory as it was (it used to
// grow by about a gigabyte per stream).
func TestOversizedFrameHeaderAllocatesNothingLarge(t *testing.T) {
	dir := t.TempDir()
	base, err := freeMemberPorts(10)
	if err != nil {
		t.Fatal(err)
	}
	tp := freeTCPPort(t)
	m, err := guardedMember(t, dir, "data", 1, netSpec{Port: base, Ports: 10, MinSize: 1, TransportPort: tp})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.waitHealthy(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	pid := m.cmd.Process.Pid
	before := vmSize(t, pid)

	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(tp))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := yamux.Client(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	hdr, err := msgpack.Marshal(map[string]any{"m": "op", "f": "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	var frame bytes.Buffer
	binary.Write(&frame, binary.BigEndian, uint32(len(hdr)))
	frame.Write(hdr)
	binary.Write(&frame, binary.BigEndian, uint32(1<<30)) // MaxMessageSize, no body
	frame.Write([]byte{1, 0})
	const streams = 4
	for range streams {
		st, err := sess.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Write(frame.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // let the member read what was sent
	after := vmSize(t, pid)
	t.Logf("VmSize %d KiB before, %d KiB after %d streams announcing 1 GiB each", before, after, streams)
	if grew := after - before; grew > 256<<10 {
		t.Errorf("the member's virtual memory grew by %d MiB", grew>>10)
	}
}
