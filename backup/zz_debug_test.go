package backup_test

import (
	"testing"
	"time"
)

func TestZZDebug(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 2 * longStop
	m1, m2, m3 := c.add(), c.add(), c.add()
	before := c.waitSafe()
	t.Logf("before %d %v", before.Version, before.Owners)
	written := map[int]map[string]string{}
	c.writeKeys(before, "before-", 0, 50, written)
	m3.stop()
	m3b := c.addAt("m3b", "m3")
	c.members = []*member{m1, m2, m3b}
	for range 6 {
		time.Sleep(300 * time.Millisecond)
		tab, _ := m1.proto.Table()
		var ids []string
		for _, m := range m1.proto.Members() {
			ids = append(ids, m.ID+"@"+m.Addr)
		}
		t.Logf("members %v tab %d %v away %v %v", ids, tab.Version, tab.Owners, tab.Away, tab.Departed)
	}
}
