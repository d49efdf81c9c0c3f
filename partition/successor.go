package partition

import "slices"

// Members returns the members t gives a replica of some partition to, in
// the order t admitted them (Order): the member list, oldest first, that
// Assign was given when it made t, as far as t shows it.
func (t *Table) Members() []string {
	in := make(map[string]bool)
	for _, rs := range t.Owners {
		for _, m := range rs {
			in[m] = true
		}
	}
	var out []string
	for _, m := range t.Order {
		if in[m] {
			out = append(out, m)
			delete(in, m)
		}
	}
	if len(in) > 0 {
		return nil // a replica the order does not name: Assign makes no such table
	}
	return out
}

// Equal reports whether t and u are the same table: version, replica
// sets, Since, Joined and Order alike (an empty list equals a missing one).
func (t *Table) Equal(u *Table) bool {
	if t == nil || u == nil {
		return t == u
	}
	return t.Version == u.Version &&
		slices.EqualFunc(t.Owners, u.Owners, slices.Equal) &&
		slices.Equal(t.Since, u.Since) &&
		slices.EqualFunc(t.Joined, u.Joined, slices.Equal) &&
		slices.Equal(t.Order, u.Order)
}

// Succeeds reports whether t is exactly the table a master holding prev
// computes next with Assign (with the given number of backups) for the
// members t names (Members), and returns them. A master may skip versions
// (a version pushed once is never reused), so t's version may be any
// above prev's; everything else must be what Assign gives from prev.
//
// A table that succeeds prev carries no assignment of its maker's
// choosing: whoever offers it could only have computed it from prev, as
// any master would for those members. Package cluster uses this to take,
// from a member, a table that the previous master published to some
// members only, without taking a table a member made up.
func (t *Table) Succeeds(prev *Table, backups int) ([]string, bool) {
	if t == nil || prev == nil || t.Version <= prev.Version || len(t.Owners) != len(prev.Owners) {
		return nil, false
	}
	ms := t.Members()
	if len(ms) == 0 {
		return nil, false
	}
	base := *prev
	base.Version = t.Version - 1
	if !Assign(ms, len(prev.Owners), backups, &base).Equal(t) {
		return nil, false
	}
	return ms, true
}
