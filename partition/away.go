package partition

import (
	"fmt"
	"slices"
)

// The slots a table holds for members away (AssignHolding).

// Departed is what a table keeps of a member whose slots it holds.
type Departed struct {
	// Since is when a master first saw the member gone, in Unix
	// nanoseconds of that master's wall clock.
	Since int64
	// Addr is the member's advertised address ("" when unknown).
	Addr string
}

// MaxDepartedAddr bounds Departed.Addr: a host:port is far shorter.
const MaxDepartedAddr = 512

// CheckAway reports the first inconsistency of the table's slots held
// for members away: Away or AwayOwner not one entry per partition, or a
// Departed entry for a member Away does not name or with an address
// over MaxDepartedAddr bytes. Departed is thus no larger than Away.
func (t *Table) CheckAway() error {
	if len(t.Away) != 0 && len(t.Away) != len(t.Owners) || len(t.AwayOwner) != 0 && len(t.AwayOwner) != len(t.Owners) {
		return fmt.Errorf("stowage/partition: table %d holds slots for %d and owners for %d partitions, not %d", t.Version, len(t.Away), len(t.AwayOwner), len(t.Owners))
	}
	if len(t.Departed) == 0 {
		return nil
	}
	named := t.AwayMembers()
	for id, d := range t.Departed {
		if _, ok := slices.BinarySearch(named, id); !ok {
			return fmt.Errorf("stowage/partition: table %d keeps a departed member %.64q whose slot it does not hold", t.Version, id)
		}
		if len(d.Addr) > MaxDepartedAddr {
			return fmt.Errorf("stowage/partition: table %d: departed member %.64q has an address of %d bytes, over %d", t.Version, id, len(d.Addr), MaxDepartedAddr)
		}
	}
	return nil
}

// AwayMembers returns the members whose slot the table holds in any
// partition, sorted.
func (t *Table) AwayMembers() []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range t.Away {
		for _, id := range a {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// AwayOwnerOf returns the member away that owned partition p when it
// left, or "".
func (t *Table) AwayOwnerOf(p int) string {
	if p < 0 || p >= len(t.AwayOwner) {
		return ""
	}
	return t.AwayOwner[p]
}

// AwayFrom returns the members whose slot in partition p's replica set
// is held for their return.
func (t *Table) AwayFrom(p int) []string {
	if p < 0 || p >= len(t.Away) {
		return nil
	}
	return t.Away[p]
}

// Reclaimed returns a copy of t in which member to takes the slots held
// for member from: from's entries in Away, AwayOwner and Departed name
// to instead. A member back under a new id (a restart at the same
// address) thus takes what its old id left; the caller makes sure to is
// in no replica set and no slot of t.
func (t *Table) Reclaimed(from, to string) *Table {
	c := *t
	if len(t.Away) > 0 {
		c.Away = make([][]string, len(t.Away))
		for p, a := range t.Away {
			if a != nil {
				c.Away[p] = slices.Clone(a)
				for i, id := range c.Away[p] {
					if id == from {
						c.Away[p][i] = to
					}
				}
			}
		}
	}
	if len(t.AwayOwner) > 0 {
		c.AwayOwner = slices.Clone(t.AwayOwner)
		for p, id := range c.AwayOwner {
			if id == from {
				c.AwayOwner[p] = to
			}
		}
	}
	if len(t.Departed) > 0 {
		c.Departed = make(map[string]Departed, len(t.Departed))
		for id, d := range t.Departed {
			if id != from {
				c.Departed[id] = d
			}
		}
	}
	return &c
}
