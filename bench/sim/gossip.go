package sim

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Gossip starts n members of the real membership layer (memberlist with
// stowage's delegate, at its default LAN timing) on 127.0.0.1, waits until
// every member sees all n and the news of their joins has died down
// (settle), then counts every byte they send and receive over window and
// returns the bytes per member per second. Probes,
// gossip and the push/pull state exchange (every 30 s) are all in it, so
// window should cover at least one push/pull interval.
func Gossip(ctx context.Context, n int, settle, window time.Duration) (float64, error) {
	var bytes atomic.Int64
	count := func(k int) { bytes.Add(int64(k)) }
	var cs []*cluster.Cluster
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	var seed string
	for i := range n {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		cfg := cluster.Config{ClusterName: "sim", BindAddr: "127.0.0.1", Port: port, GossipBytes: count}
		if i > 0 {
			cfg.MemberList = []string{seed}
		}
		c, err := cluster.Join(ctx, cfg)
		if err != nil {
			return 0, fmt.Errorf("sim: gossip member %d: %w", i, err)
		}
		cs = append(cs, c)
		if i == 0 {
			seed = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		}
	}
	for _, c := range cs {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := c.WaitForSize(wctx, n)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("sim: %d gossip members never all saw each other: %w", n, err)
		}
	}
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	start := bytes.Load()
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return float64(bytes.Load()-start) / float64(n) / window.Seconds(), nil
}

// freePort returns a port that was free on 127.0.0.1 for both TCP and
// UDP a moment ago.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("sim: no free port on 127.0.0.1")
}
