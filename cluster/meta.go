package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// metaVersion is the first byte of a member's metadata:
// [version 1][flags 1][start Unix nanos, int64 big-endian 8]
// [cluster name length 1][cluster name][transport address length 1]
// [transport address][member run id].
const metaVersion = 2

// flagLeaving is set by Leave just before the leave message, so that the
// others report MemberLeft rather than MemberFailed (memberlist does not
// tell its event delegate which of the two happened).
const flagLeaving = 1

// flagDraining is set by SetDraining: the member is handing its
// partitions over before it leaves, and gets none in new tables.
const flagDraining = 2

// meta is what a member publishes about itself.
type meta struct {
	cluster string
	start   time.Time
	flags   byte
	rpc     string // transport address
	run     string // member run id
}

func encodeMeta(m meta) []byte {
	b := make([]byte, 11, 12+len(m.cluster)+len(m.rpc)+len(m.run))
	b[0], b[1] = metaVersion, m.flags
	binary.BigEndian.PutUint64(b[2:], uint64(m.start.UnixNano()))
	b[10] = byte(len(m.cluster))
	b = append(b, m.cluster...)
	b = append(b, byte(len(m.rpc)))
	b = append(b, m.rpc...)
	return append(b, m.run...)
}

func decodeMeta(b []byte) (meta, error) {
	bad := errors.New("stowage/cluster: member metadata is not stowage's")
	if len(b) < 12 || b[0] != metaVersion {
		return meta{}, bad
	}
	n := 11 + int(b[10])
	if len(b) < n+1 || len(b) < n+1+int(b[n]) {
		return meta{}, bad
	}
	r := n + 1 + int(b[n])
	return meta{cluster: string(b[11:n]), start: time.Unix(0, int64(binary.BigEndian.Uint64(b[2:10]))), flags: b[1],
		rpc: string(b[n+1 : r]), run: string(b[r:])}, nil
}

// expand turns a member-list entry into host:port addresses.
func expand(entry string, port int) ([]string, error) {
	entry = strings.TrimSpace(entry)
	host, ps, err := net.SplitHostPort(entry)
	if err != nil {
		// No port: the configured one and the next ones.
		if strings.Contains(entry, "]") || strings.Count(entry, ":") == 1 || entry == "" {
			return nil, fmt.Errorf("stowage/cluster: network.join.tcp-ip.member-list entry %q: %w", entry, err)
		}
		out := make([]string, 0, portTries)
		for i := 0; i < portTries; i++ {
			out = append(out, net.JoinHostPort(entry, strconv.Itoa(port+i)))
		}
		return out, nil
	}
	lo, hi := ps, ps
	if i := strings.IndexByte(ps, '-'); i >= 0 {
		lo, hi = ps[:i], ps[i+1:]
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < 1 || b > 65535 || a > b {
		return nil, fmt.Errorf("stowage/cluster: network.join.tcp-ip.member-list entry %q: bad port %q", entry, ps)
	}
	out := make([]string, 0, b-a+1)
	for p := a; p <= b; p++ {
		out = append(out, net.JoinHostPort(host, strconv.Itoa(p)))
	}
	return out, nil
}
