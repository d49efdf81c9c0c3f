package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// netLab is a set of Linux network namespaces made for one test: a
// bridge namespace, one namespace per member with a veth ("e0", address
// 10.77.0.<10+i>/24) into the bridge, and a client namespace with a
// point-to-point veth to each member (member side "c0" 10.78.<i>.2, client
// side "m<i>" 10.78.<i>.1). The test's HTTP clients dial from the client
// namespace, over links that the faults never touch, so a member cut off
// from the others can still be asked whether it acknowledges writes. Only
// interfaces inside these namespaces are created or changed; the host's
// are never touched.
type netLab struct {
	t      *testing.T
	prefix string // every namespace's name starts with it
	bridge string
	client string
	member []string // member i's namespace is member[i-1]
}

// netLabPrefix starts the name of every namespace a netLab creates; the
// process id follows, so stale namespaces of dead test runs are known.
const netLabPrefix = "stwlab"

// newNetLab creates the namespaces for n members, or skips the test when
// this process cannot (not root, no CAP_NET_ADMIN, no ip command). They
// are removed when the test ends, whatever its outcome.
func newNetLab(t *testing.T, n int) *netLab {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespace test skipped: the ip command (iproute2) is missing")
	}
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("network namespace test skipped: the tc command (iproute2) is missing")
	}
	removeStaleNetLabs(t)
	l := &netLab{t: t, prefix: fmt.Sprintf("%s%d", netLabPrefix, os.Getpid())}
	l.bridge, l.client = l.prefix+"br", l.prefix+"cl"
	probe := l.prefix + "probe"
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("network namespace test skipped: cannot create a network namespace (needs root or CAP_NET_ADMIN): %v: %s", err, strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	t.Cleanup(l.remove)
	l.ip("netns", "add", l.bridge)
	l.ip("netns", "add", l.client)
	l.ip("-n", l.bridge, "link", "add", "br0", "type", "bridge")
	l.ip("-n", l.bridge, "link", "set", "br0", "up")
	l.ip("-n", l.client, "link", "set", "lo", "up")
	for i := 1; i <= n; i++ {
		ns := fmt.Sprintf("%sm%d", l.prefix, i)
		l.member = append(l.member, ns)
		l.ip("netns", "add", ns)
		l.ip("-n", ns, "link", "set", "lo", "up")
		b := fmt.Sprintf("b%d", i)
		l.ip("-n", ns, "link", "add", "e0", "type", "veth", "peer", "name", b, "netns", l.bridge)
		l.ip("-n", l.bridge, "link", "set", b, "master", "br0")
		l.ip("-n", l.bridge, "link", "set", b, "up")
		l.ip("-n", ns, "addr", "add", l.memberIP(i)+"/24", "dev", "e0")
		l.ip("-n", ns, "link", "set", "e0", "up")
		m := fmt.Sprintf("m%d", i)
		l.ip("-n", ns, "link", "add", "c0", "type", "veth", "peer", "name", m, "netns", l.client)
		l.ip("-n", ns, "addr", "add", l.httpIP(i)+"/24", "dev", "c0")
		l.ip("-n", ns, "link", "set", "c0", "up")
		l.ip("-n", l.client, "addr", "add", fmt.Sprintf("10.78.%d.1/24", i), "dev", m)
		l.ip("-n", l.client, "link", "set", m, "up")
	}
	return l
}

// addServer creates the namespace <prefix><name> on the bridge, its veth
// "e0" with the address ip/24 and the bridge's port "port", for a server
// the members reach over the bridge (the faults cut members' ports, not
// this one), and returns the namespace's name. It goes with the lab's
// other namespaces.
func (l *netLab) addServer(name, ip, port string) string {
	l.t.Helper()
	ns := l.prefix + name
	l.ip("netns", "add", ns)
	l.ip("-n", ns, "link", "set", "lo", "up")
	l.ip("-n", ns, "link", "add", "e0", "type", "veth", "peer", "name", port, "netns", l.bridge)
	l.ip("-n", l.bridge, "link", "set", port, "master", "br0")
	l.ip("-n", l.bridge, "link", "set", port, "up")
	l.ip("-n", ns, "addr", "add", ip+"/24", "dev", "e0")
	l.ip("-n", ns, "link", "set", "e0", "up")
	return ns
}

// memberIP is member i's address on the bridge, the one it joins with.
func (l *netLab) memberIP(i int) string { return fmt.Sprintf("10.77.0.%d", 10+i) }

// httpIP is member i's address on its link to the client namespace.
func (l *netLab) httpIP(i int) string { return fmt.Sprintf("10.78.%d.2", i) }

// ip runs the ip command and fails the test if it fails.
func (l *netLab) ip(args ...string) { l.t.Helper(); l.run("ip", args...) }

// bridgeTC runs tc inside the bridge namespace.
func (l *netLab) bridgeTC(args ...string) {
	l.t.Helper()
	l.run("ip", append([]string{"netns", "exec", l.bridge, "tc"}, args...)...)
}

func (l *netLab) run(name string, args ...string) {
	l.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
}

// remove deletes every namespace of this lab; their interfaces go with
// them. The member processes must have been killed before (a process
// keeps its namespace alive).
func (l *netLab) remove() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, name := range netnsNames(string(out)) {
		if strings.HasPrefix(name, l.prefix) {
			if b, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
				l.t.Logf("ip netns del %s: %v: %s", name, err, b)
			}
		}
	}
}

// removeStaleNetLabs deletes the namespaces of earlier test runs whose
// process is gone.
func removeStaleNetLabs(t *testing.T) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, name := range netnsNames(string(out)) {
		rest, ok := strings.CutPrefix(name, netLabPrefix)
		if !ok {
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end <= 0 {
			continue
		}
		pid, _ := strconv.Atoi(rest[:end])
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		if b, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Logf("removing stale namespace %s: %v: %s", name, err, b)
		}
	}
}

// netnsNames parses `ip netns list`: one name a line, perhaps followed
// by " (id: N)".
func netnsNames(list string) []string {
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// dialIn returns a DialContext that opens its connections from inside
// the namespace ns: each dial runs on an OS thread locked to it, which
// joins ns, dials, and joins its own namespace again before it is handed
// back to the scheduler. A socket stays in the namespace it was created
// in, so the connection can then be used from anywhere. The thread is not
// simply left to die with the goroutine: a child process whose Pdeathsig
// (dieWithParent) names that thread as its parent would be killed with it.
func dialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread()
			c, back, err := dialFromNamespace(ctx, ns, network, addr)
			if back {
				runtime.UnlockOSThread()
			} // else the thread is in a namespace it cannot leave: it ends with this goroutine
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}

// dialFromNamespace dials from ns on the current (locked) thread and
// reports whether the thread is back in its own namespace.
func dialFromNamespace(ctx context.Context, ns, network, addr string) (net.Conn, bool, error) {
	home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, true, err
	}
	defer home.Close()
	f, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		return nil, true, err
	}
	err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
	f.Close()
	if err != nil {
		return nil, true, fmt.Errorf("joining namespace %s: %w", ns, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	back := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil
	return c, back, err
}
