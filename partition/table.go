package partition

import (
	"fmt"
	"slices"
	"sort"
)

// Table is a versioned partition table: for each partition id, the
// replica set as member ids, owner first, then its synchronous backups in
// promotion order. The master computes a table and publishes it; a higher
// Version replaces a lower one.
//
// A Table is a plain value: it is not safe for concurrent mutation, and
// Assign never modifies the table it is given.
type Table struct {
	Version int64
	Owners  [][]string // per partition: owner then backups
	// Since is, per partition, the Version of the table that gave the
	// partition its current owner: a member that has served a partition
	// since an older table, while a later one gave the ownership away
	// and back, knows its copy may be behind.
	Since []int64
	// Joined is, per partition and aligned with Owners, the Version of the
	// table since which each member has been in the replica set without a
	// break: a copy filled before that may have missed writes.
	Joined [][]int64
	// Order is the members in the order masters admitted them: the first
	// live one is the master (see AdmitOrder). A member's claimed start
	// time ranks it only against members no table has admitted yet.
	Order []string
	// Away is, per partition (nil when none), the members that left the
	// replica set without a graceful leave and whose slot is held for
	// their return (AssignHolding): the partition runs with fewer
	// backups meanwhile, and is not safe.
	Away [][]string
	// AwayOwner is, per partition (nil when none), the member of Away
	// that owned the partition when it left ("" when none did): back in
	// time, it owns the partition again, so that ownership and backups
	// return to where they were instead of being balanced anew.
	AwayOwner []string
	// Departed is, per member named in Away (nil when none), what the
	// masters keep of it while its slots are held: since when it is gone
	// and where it was, so that a new master continues its grace and a
	// member back under a new id (a restart) is known by its address.
	Departed map[string]Departed
}

// AdmitOrder returns prev's Order followed by the members it does not
// order yet, in the order given: a new member joins at the end, whatever
// start time it claims. Members that are gone keep their place, so that
// both sides of a split, each publishing tables without the other, still
// rank the members admitted before it alike when they meet again (the
// master is the first live one, see cluster). Gone members are dropped
// from the end once the order holds more than twice the members plus
// eight.
func AdmitOrder(prev *Table, members []string) []string {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m] = true
	}
	var out []string
	seen := make(map[string]bool, len(members))
	if prev != nil {
		for _, m := range prev.Order {
			if !seen[m] {
				out = append(out, m)
				seen[m] = true
			}
		}
	}
	for _, m := range members {
		if !seen[m] {
			out = append(out, m)
			seen[m] = true
		}
	}
	limit := 2*len(members) + 8
	for i := len(out) - 1; i >= 0 && len(out) > limit; i-- {
		if !live[out[i]] {
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// JoinedAt returns when member id joined partition p's replica set
// without a break since, or -1 when it is not in the set.
func (t *Table) JoinedAt(p int, id string) int64 {
	if p < 0 || p >= len(t.Owners) {
		return -1
	}
	for i, m := range t.Owners[p] {
		if m == id {
			if p < len(t.Joined) && i < len(t.Joined[p]) {
				return t.Joined[p][i]
			}
			return 0
		}
	}
	return -1
}

// SourceSince is, for a copy of partition p on member id offered to the
// partition's owner while it acquires it, the table version from which
// a fill makes that copy whole (-1: none does).
//
// A member's copy misses writes only if the owner of the copy's epoch
// went on acknowledging writes after the member left the replica set.
// The owner acquiring p has owned it since OwnerSince(p) = S without a
// break and has not served it yet, so every earlier owner lost the
// ownership by S. A copy filled at F >= S-1 was in the set at F, left it
// (if it did) after F, so at S or later: its epoch's owner acknowledged
// nothing without it. That is the case of a member that joins and takes
// a partition over while the old owner stays as its backup and the
// other backup leaves the set, and then the old owner dies: the backup
// that left holds every write, and is back in the set under a newer
// Joined than its fill. Otherwise the copy counts only if filled since
// the member last joined the set (JoinedAt).
//
// Only the acquiring owner may rely on this: an active owner sending
// records to its backups needs JoinedAt itself (it may have gone on
// without a backup that left).
func (t *Table) SourceSince(p int, id string) int64 {
	j := t.JoinedAt(p, id)
	s := t.OwnerSince(p)
	if s <= 0 {
		return j
	}
	if j < 0 || s-1 < j {
		return s - 1
	}
	return j
}

// OwnerSince returns Since[p], or 0 when the table has none.
func (t *Table) OwnerSince(p int) int64 {
	if p < 0 || p >= len(t.Since) {
		return 0
	}
	return t.Since[p]
}

// Owner returns the owner of partition p, or "" when it has none.
func (t *Table) Owner(p int) string {
	if p < 0 || p >= len(t.Owners) || len(t.Owners[p]) == 0 {
		return ""
	}
	return t.Owners[p][0]
}

// Validate reports the first partition whose replica set names a member
// twice.
func (t *Table) Validate() error {
	for p, rs := range t.Owners {
		seen := make(map[string]bool, len(rs))
		for _, m := range rs {
			if seen[m] {
				return fmt.Errorf("stowage/partition: partition %d lists member %q twice", p, m)
			}
			seen[m] = true
		}
	}
	return nil
}

// Assign returns a new table for members (in join order, oldest first)
// with the given number of partitions and synchronous backups per
// partition. Each replica set has min(backups+1, len(members)) distinct
// members.
//
// Owners are spread evenly: every member's owner count is within one of
// every other's. Without prev, partition p is owned by members[p%n] and
// its backups rotate over the other members, so that the partitions of any
// one member have their first backups spread over all the others and a
// member's loss promotes evenly. With prev, as few partitions as
// possible change owner:
//   - a partition whose owner is still a member keeps it, unless that owner
//     holds more than its fair share (a member joined), in which case the
//     ownership moves to an under-loaded member and the old owner becomes
//     the first backup, so it keeps serving the data during migration;
//   - a partition whose owner is gone is owned by its first live backup
//     (promotion), unless that would break the balance;
//   - backups still alive stay in place, gaps are filled with the members
//     backing up the fewest partitions.
//
// The result's Version is prev.Version+1 (1 without prev). With no members
// every replica set is empty.
func Assign(members []string, partitions, backups int, prev *Table) *Table {
	return AssignHolding(members, partitions, backups, prev, nil)
}

// AssignHolding is Assign that holds the replica slots of members that
// are gone but may come back (away: members prev names, in a replica set
// or in Away, that left without a graceful leave, within their grace
// period), as Elasticsearch delays the allocation of a departed node's
// replicas: a partition such a member owned is owned by its first live
// backup at once (availability does not wait), but the slots it held are
// not given to other members; the partition runs with fewer backups, and
// the slots are in the new table's Away. A member of away that is back
// among members takes its slots again, as a backup placed after the
// others (its copy is filled again, by a delta where it still holds
// one); one left out of away (its grace ran out) loses them, and they are
// filled as Assign fills any gap. The new table keeps prev's Departed of
// the members it still holds slots for.
func AssignHolding(members []string, partitions, backups int, prev *Table, away []string) *Table {
	n := len(members)
	t := &Table{Version: 1, Owners: make([][]string, partitions)}
	if prev != nil {
		t.Version = prev.Version + 1
	}
	t.Since = make([]int64, partitions)
	t.Joined = make([][]int64, partitions)
	for p := range t.Since {
		t.Since[p] = t.Version
	}
	t.Order = AdmitOrder(prev, members)
	defer func() {
		for p, rs := range t.Owners {
			if t.Joined[p] == nil {
				t.Joined[p] = make([]int64, len(rs))
				for i := range rs {
					t.Joined[p][i] = t.Version
				}
			}
		}
	}()
	if n == 0 || partitions <= 0 {
		for p := range t.Owners {
			t.Owners[p] = []string{}
		}
		return t
	}
	r := backups + 1
	if r > n {
		r = n
	}
	if r < 1 {
		r = 1
	}
	if prev == nil {
		for p := range t.Owners {
			o, k := p%n, p/n
			rs := make([]string, r)
			rs[0] = members[o]
			for j := 1; j < r; j++ {
				rs[j] = members[(o+1+(k+j-1)%(n-1))%n]
			}
			t.Owners[p] = rs
		}
		return t
	}
	a := newAssigner(members, partitions, r, prev, away)
	a.owners()
	a.backups()
	t.Owners = a.sets
	for p, h := range a.held {
		if len(h) > 0 {
			if t.Away == nil {
				t.Away = make([][]string, partitions)
			}
			t.Away[p] = h
		}
		if a.heldOwner[p] != "" {
			if t.AwayOwner == nil {
				t.AwayOwner = make([]string, partitions)
			}
			t.AwayOwner[p] = a.heldOwner[p]
		}
	}
	for _, id := range t.AwayMembers() {
		if d, ok := prev.Departed[id]; ok {
			if t.Departed == nil {
				t.Departed = map[string]Departed{}
			}
			t.Departed[id] = d
		}
	}
	t.Since = make([]int64, partitions)
	t.Joined = make([][]int64, partitions)
	for p, rs := range t.Owners {
		t.Since[p] = t.Version
		if p < len(prev.Owners) && len(rs) > 0 && prev.Owner(p) == rs[0] && prev.OwnerSince(p) > 0 {
			t.Since[p] = prev.OwnerSince(p)
		}
		t.Joined[p] = make([]int64, len(rs))
		for i, m := range rs {
			t.Joined[p][i] = t.Version
			if j := prev.JoinedAt(p, m); j > 0 {
				t.Joined[p][i] = j
			}
		}
	}
	return t
}

type assigner struct {
	members []string
	index   map[string]int // member -> position in join order
	r       int
	sets    [][]string
	held    [][]string // slots held for members away (AssignHolding)
	// heldOwner: the member of held that owned the partition when it left.
	heldOwner []string
	kept      []bool // the partition's owner is the one prev had
	moved     []bool // owners moved the partition off a live owner, now its first backup
}

func newAssigner(members []string, partitions, r int, prev *Table, away []string) *assigner {
	a := &assigner{members: members, index: make(map[string]int, len(members)), r: r,
		sets: make([][]string, partitions), held: make([][]string, partitions), heldOwner: make([]string, partitions), kept: make([]bool, partitions), moved: make([]bool, partitions)}
	for i, m := range members {
		if _, dup := a.index[m]; !dup {
			a.index[m] = i
		}
	}
	for p := range a.sets {
		var old []string
		if p < len(prev.Owners) {
			old = prev.Owners[p]
		}
		rs := make([]string, 0, r)
		seen := map[string]bool{}
		// A member back from away takes its slot after the live ones.
		for _, m := range append(slices.Clone(old), prev.AwayFrom(p)...) {
			_, live := a.index[m]
			switch {
			case seen[m]:
			case live:
				rs = append(rs, m)
			case slices.Contains(away, m):
				a.held[p] = append(a.held[p], m)
			}
			seen[m] = true
		}
		// A held slot only keeps another member out of a gap: it never
		// puts a live replica out (the set shrank with the members).
		a.held[p] = a.held[p][:min(len(a.held[p]), max(0, r-max(1, len(rs))))]
		switch o := prev.AwayOwnerOf(p); {
		case len(old) > 0 && slices.Contains(a.held[p], old[0]):
			a.heldOwner[p] = old[0] // the owner left now
		case slices.Contains(a.held[p], o):
			a.heldOwner[p] = o // still away
		case o != "" && slices.Contains(rs, o) && rs[0] != o:
			// Back: it owns the partition again; the member that owned it
			// meanwhile is its first backup, as it was before.
			rs = append([]string{o}, slices.DeleteFunc(rs, func(m string) bool { return m == o })...)
			a.moved[p] = true
		}
		// Promotion: the first live replica is the owner.
		a.kept[p] = len(old) > 0 && len(rs) > 0 && rs[0] == old[0]
		a.sets[p] = rs
	}
	return a
}

// owners balances ownership with the fewest owner changes.
func (a *assigner) owners() {
	n, P := len(a.members), len(a.sets)
	count := make(map[string]int, n)
	keptCount := make(map[string]int, n)
	for p, rs := range a.sets {
		if len(rs) > 0 {
			count[rs[0]]++
			if a.kept[p] {
				keptCount[rs[0]]++
			}
		}
	}
	// The members that already own the most get the larger quotas.
	order := append([]string(nil), a.members...)
	sort.SliceStable(order, func(i, j int) bool {
		if count[order[i]] != count[order[j]] {
			return count[order[i]] > count[order[j]]
		}
		return keptCount[order[i]] > keptCount[order[j]]
	})
	target := make(map[string]int, n)
	for i, m := range order {
		target[m] = P / n
		if i < P%n {
			target[m]++
		}
	}
	under := func(m string) bool { return count[m] < target[m] }
	// Release surplus: promoted partitions before long-held ones, and
	// those an under-loaded replica can take over without moving data.
	var free []int
	for pass := 0; pass < 4; pass++ {
		for p, rs := range a.sets {
			if len(rs) == 0 || count[rs[0]] <= target[rs[0]] {
				continue
			}
			if a.kept[p] != (pass >= 2) {
				continue
			}
			if pass%2 == 0 {
				took := false
				for i, m := range rs[1:] {
					if under(m) {
						count[rs[0]]--
						count[m]++
						a.promote(p, i+1)
						took = true
						break
					}
				}
				if !took {
					continue
				}
			} else if !a.holding() {
				// While a slot is held for a member away, ownership moves
				// only within replica sets: the owners it promoted hold
				// more than their share until it is back (or its grace ran
				// out), and a move now would copy data to a member that
				// holds none, to be moved back on the return.
				count[rs[0]]--
				free = append(free, p)
			}
		}
	}
	// Unowned partitions (all replicas gone, or surplus released).
	for p, rs := range a.sets {
		if len(rs) == 0 {
			free = append(free, p)
		}
	}
	sort.Ints(free)
	for _, p := range free {
		best := ""
		for _, m := range a.members {
			if !under(m) {
				continue
			}
			if best == "" || target[m]-count[m] > target[best]-count[best] {
				best = m
			}
		}
		if best == "" { // cannot happen: quotas sum to P
			best = a.members[0]
		}
		count[best]++
		rs := a.sets[p]
		out := make([]string, 0, a.r)
		out = append(out, best)
		for _, m := range rs {
			if m != best {
				out = append(out, m)
			}
		}
		a.sets[p] = out
		a.moved[p] = len(rs) > 0
	}
}

// promote makes replica i of partition p its owner; the old owner becomes
// the first backup.
func (a *assigner) promote(p, i int) {
	rs := a.sets[p]
	m := rs[i]
	out := make([]string, 0, len(rs))
	out = append(out, m)
	for j, x := range rs {
		if j != i {
			out = append(out, x)
		}
	}
	a.sets[p] = out
	a.moved[p] = true
}

// backups trims each replica set to r, moves backups from members over
// their fair share to members under it and fills the gaps with the least loaded members.
func (a *assigner) backups() {
	n := len(a.members)
	load := make(map[string]int, n)
	for p, rs := range a.sets {
		if len(rs) > a.size(p) {
			rs = rs[:a.size(p)]
			a.sets[p] = rs
		}
		for _, m := range rs[1:] {
			load[m]++
		}
	}
	// Fill the gaps (a backup left, or the replica count grew) with the
	// members backing up the fewest partitions.
	for p, rs := range a.sets {
		for len(rs) < a.size(p) {
			best := a.leastLoaded(rs, load)
			if best == "" {
				break
			}
			load[best]++
			rs = append(rs, best)
		}
		a.sets[p] = rs
	}
	if a.holding() {
		// Backups stay where they are while slots are held: a member
		// away leaves the loads uneven, and evening them out would copy
		// partitions that go back once it returns.
		return
	}
	a.rebalanceBackups(load)
}

// holding reports whether a slot is held for a member away.
func (a *assigner) holding() bool {
	return slices.ContainsFunc(a.held, func(h []string) bool { return len(h) > 0 })
}

// size is how many live replicas partition p gets: r less the slots held
// for members away.
func (a *assigner) size(p int) int {
	return max(1, a.r-len(a.held[p]))
}

// rebalanceBackups moves backups from the most loaded members to the
// least loaded ones, one at a time, while a member backs up two or more
// fewer than its share (slots/n, rounded down) or backups range over more
// than two. Every move copies a
// partition to a member, so it moves only what balance needs: on a join
// the new member is filled to its share from the members that hold the
// most, and members within one of the share keep what they have. A
// demoted owner stays the first backup: it holds the data.
func (a *assigner) rebalanceBackups(load map[string]int) {
	n := len(a.members)
	slots := 0
	for p := range a.sets {
		slots += a.size(p) - 1
	}
	if n < 2 || slots == 0 {
		return
	}
	// Members that lost a backup to a demoted owner may sit one under
	// the share: filling them would cost a data copy each and buy little
	// balance.
	floor := slots/n - 1
	order := slices.Clone(a.members) // receivers, least loaded first
	for {
		slices.SortStableFunc(order, func(x, y string) int { return load[x] - load[y] })
		most := load[order[len(order)-1]]
		moved := false
		for _, c := range order {
			if load[c] >= floor && most-load[c] <= 2 {
				break
			}
			if a.moveBackup(c, load) {
				moved = true
				break
			}
		}
		if !moved {
			return
		}
	}
}

// moveBackup hands c one backup slot held by the most loaded member that
// backs up at least two more than c: the slot of a partition c is not a
// replica of, and not a demoted owner's. It reports whether it moved one.
func (a *assigner) moveBackup(c string, load map[string]int) bool {
	bp, bi := -1, -1
	for p, rs := range a.sets {
		if slices.Contains(rs, c) {
			continue
		}
		for i := 1; i < len(rs); i++ {
			m := rs[i]
			if load[m]-load[c] < 2 || (i == 1 && a.moved[p]) {
				continue
			}
			if bp < 0 || load[m] > load[a.sets[bp][bi]] {
				bp, bi = p, i
			}
		}
	}
	if bp < 0 {
		return false
	}
	m := a.sets[bp][bi]
	load[m]--
	load[c]++
	a.sets[bp][bi] = c
	return true
}

// leastLoaded returns the member outside rs with the fewest backups,
// earliest in join order on a tie, or "" when every member is in rs.
func (a *assigner) leastLoaded(rs []string, load map[string]int) string {
	best := ""
	for _, m := range a.members {
		if slices.Contains(rs, m) {
			continue
		}
		if best == "" || load[m] < load[best] {
			best = m
		}
	}
	return best
}
