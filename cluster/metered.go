package cluster

import (
	"net"
	"time"

	"github.com/hashicorp/memberlist"
)

// meteredTransport is memberlist's network transport with every byte it
// sends or receives counted (Config.GossipBytes).
type meteredTransport struct {
	*memberlist.NetTransport
	count   func(int)
	packets chan *memberlist.Packet
	streams chan net.Conn
	stop    chan struct{}
}

func newMeteredTransport(nt *memberlist.NetTransport, count func(int)) *meteredTransport {
	t := &meteredTransport{NetTransport: nt, count: count, packets: make(chan *memberlist.Packet), streams: make(chan net.Conn), stop: make(chan struct{})}
	go t.relay()
	return t
}

// relay counts what arrives before memberlist reads it.
func (t *meteredTransport) relay() {
	for {
		select {
		case p := <-t.NetTransport.PacketCh():
			t.count(len(p.Buf))
			select {
			case t.packets <- p:
			case <-t.stop:
				return
			}
		case c := <-t.NetTransport.StreamCh():
			select {
			case t.streams <- meteredConn{Conn: c, count: t.count}:
			case <-t.stop:
				c.Close()
				return
			}
		case <-t.stop:
			return
		}
	}
}

func (t *meteredTransport) PacketCh() <-chan *memberlist.Packet { return t.packets }
func (t *meteredTransport) StreamCh() <-chan net.Conn           { return t.streams }

func (t *meteredTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.count(len(b))
	return t.NetTransport.WriteTo(b, addr)
}

func (t *meteredTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := t.NetTransport.DialTimeout(addr, timeout)
	if err != nil {
		return nil, err
	}
	return meteredConn{Conn: c, count: t.count}, nil
}

func (t *meteredTransport) Shutdown() error {
	close(t.stop)
	return t.NetTransport.Shutdown()
}

// meteredConn counts a stream's bytes both ways.
type meteredConn struct {
	net.Conn
	count func(int)
}

func (c meteredConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.count(n)
	return n, err
}

func (c meteredConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.count(n)
	return n, err
}

// WriteToAddress and DialAddressTimeout are memberlist's NodeAwareTransport,
// which NetTransport implements and memberlist prefers: counted too.
func (t *meteredTransport) WriteToAddress(b []byte, addr memberlist.Address) (time.Time, error) {
	t.count(len(b))
	return t.NetTransport.WriteToAddress(b, addr)
}

func (t *meteredTransport) DialAddressTimeout(addr memberlist.Address, timeout time.Duration) (net.Conn, error) {
	c, err := t.NetTransport.DialAddressTimeout(addr, timeout)
	if err != nil {
		return nil, err
	}
	return meteredConn{Conn: c, count: t.count}, nil
}
