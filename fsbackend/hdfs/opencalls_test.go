package hdfs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// callCounter is a TCP proxy in front of the NameNode that counts the
// RPC requests going through it: after the connection preamble ("hrpc",
// version, service class, auth protocol) every request is a frame of a
// 4-byte big-endian length and that many bytes.
type callCounter struct {
	ln    net.Listener
	to    string
	calls atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newCallCounter(t *testing.T, to string) *callCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &callCounter{ln: ln, to: to}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *callCounter) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(c, s)
			c.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.count(c, s)
			s.Close()
		}()
	}
}

// count forwards the client's bytes to the NameNode frame by frame.
func (p *callCounter) count(c, s net.Conn) {
	pre := make([]byte, 7)
	if _, err := io.ReadFull(c, pre); err != nil {
		return
	}
	if _, err := s.Write(pre); err != nil {
		return
	}
	var n [4]byte
	for {
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		frame := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(c, frame); err != nil {
			return
		}
		p.calls.Add(1)
		if _, err := s.Write(append(n[:], frame...)); err != nil {
			return
		}
	}
}

func (p *callCounter) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestOpenFinishedFileOneNameNodeCall: opening a finished file and
// reading it whole asks the NameNode once (its block locations, which say
// its length and that it is finished), not for its status and then its
// locations; an EAGER load opens one file after another on the one
// NameNode connection, so every call saved is a round trip off the load.
// Opening a missing file and a directory still report ErrNotExist.
func TestOpenFinishedFileOneNameNodeCall(t *testing.T) {
	need(t, envHDFS, envCtl)
	p := newCallCounter(t, os.Getenv(envHDFS))
	raw := openRaw(t, clusterProps("fs.defaultFS", "hdfs://"+p.ln.Addr().String()))
	f, err := fsbackend.Sub(raw, uniqueDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := bytes.Repeat([]byte("stowage "), 40000)
	writeFile(t, f, "d/a.log", data)

	before := p.calls.Load()
	r, err := f.Open(ctx, "d/a.log")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != int64(len(data)) {
		t.Errorf("Size = %d, want %d", r.Size(), len(data))
	}
	if u, ok := r.(fsbackend.UnfinishedReader); ok && u.Unfinished() {
		t.Error("a closed file opened as unfinished")
	}
	got := make([]byte, len(data))
	if n, err := r.ReadAt(got, 0); n != len(data) || (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(got, data) {
		t.Errorf("ReadAt = %d, %v; equal %v", n, err, bytes.Equal(got, data))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if calls := p.calls.Load() - before; calls != 1 {
		t.Errorf("open and read of a finished file: %d NameNode calls, want 1", calls)
	}

	for _, name := range []string{"d/missing.log", "d"} {
		if r, err := f.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			if err == nil {
				r.Close()
			}
			t.Errorf("Open(%s) = %v, want ErrNotExist", name, err)
		}
	}
}
