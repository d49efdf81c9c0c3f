package partition

import "testing"

func TestSucceeds(t *testing.T) {
	v1 := Assign([]string{"a", "b", "c"}, 12, 1, nil)
	v2 := Assign([]string{"a", "b"}, 12, 1, v1)
	if ms, ok := v2.Succeeds(v1, 1); !ok || len(ms) != 2 || ms[0] != "a" || ms[1] != "b" {
		t.Fatalf("Assign's own next table: %v, %v", ms, ok)
	}
	skip := *v1
	skip.Version = 9 // versions pushed and not taken are skipped
	if _, ok := Assign([]string{"a", "c"}, 12, 1, &skip).Succeeds(v1, 1); !ok {
		t.Error("a table skipping versions does not succeed")
	}
	if _, ok := v1.Succeeds(v1, 1); ok {
		t.Error("a table succeeds itself")
	}
	if _, ok := Assign([]string{"a", "b", "c"}, 12, 1, v1).Succeeds(v1, 2); ok {
		t.Error("a table made with another backup count succeeds")
	}
	for name, edit := range map[string]func(*Table){
		"owner":  func(t *Table) { t.Owners[0] = []string{t.Owners[0][1], t.Owners[0][0]} },
		"since":  func(t *Table) { t.Since[3]-- },
		"joined": func(t *Table) { t.Joined[5][0] = 0 },
		"order":  func(t *Table) { t.Order[0], t.Order[1] = t.Order[1], t.Order[0] },
		"stray":  func(t *Table) { t.Owners[2] = append(t.Owners[2], "x") },
	} {
		f := Assign([]string{"a", "b"}, 12, 1, v1)
		edit(f)
		if _, ok := f.Succeeds(v1, 1); ok {
			t.Errorf("a table with its %s changed succeeds", name)
		}
	}
}
