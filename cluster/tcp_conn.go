package cluster

import (
	"encoding/binary"
	"net"
	"sync/atomic"
)

// TCPStats counts what a TCPTransport did on its connections, both ways,
// since it started.
type TCPStats struct {
	// Writes is the writes made on connections (one system call each,
	// TLS aside); Frames the call frames written (requests and answers).
	Writes, Frames uint64
	// Streams is the streams opened for calls.
	Streams uint64
	// DirectPipes is the pipes opened on a connection of their own
	// (tcp_direct.go), not on a session stream.
	DirectPipes uint64
}

// tcpCounters are a transport's TCPStats.
type tcpCounters struct {
	writes, frames, streams, direct atomic.Uint64
}

// Stats returns the transport's counts so far.
func (t *TCPTransport) Stats() TCPStats {
	return TCPStats{Writes: t.count.writes.Load(), Frames: t.count.frames.Load(), Streams: t.count.streams.Load(),
		DirectPipes: t.count.direct.Load()}
}

// countedConn counts the writes made on a connection.
type countedConn struct {
	net.Conn
	writes *atomic.Uint64
}

func (c countedConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// yamuxHeaderSize is the size of a yamux frame header: version, type,
// flags (u16), stream id (u32), length (u32).
const yamuxHeaderSize = 12

// joinedConn is the connection yamux writes to: yamux writes a data
// frame as two writes, its header and then its body, and joinedConn
// holds the header back and sends both in one write (one system call,
// one TLS record). Only yamux's send loop writes to it, one write at a
// time; a header of any other frame (no body follows) goes at once.
type joinedConn struct {
	net.Conn
	hdr  [yamuxHeaderSize]byte
	held bool
	buf  []byte
}

// joinedMax is the largest body copied behind its header; a larger one
// is written after the header, in a write of its own.
const joinedMax = 64 << 10

func (c *joinedConn) Write(b []byte) (int, error) {
	if c.held {
		c.held = false
		if len(b) > joinedMax {
			if _, err := c.Conn.Write(c.hdr[:]); err != nil {
				return 0, err
			}
			return c.Conn.Write(b)
		}
		c.buf = append(append(c.buf[:0], c.hdr[:]...), b...)
		if _, err := c.Conn.Write(c.buf); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	// A data frame (version 0, type 0) with a body to follow.
	if len(b) == yamuxHeaderSize && b[0] == 0 && b[1] == 0 && binary.BigEndian.Uint32(b[8:]) > 0 {
		copy(c.hdr[:], b)
		c.held = true
		return len(b), nil
	}
	return c.Conn.Write(b)
}
