package dmap

import (
	"bytes"
	"testing"
)

// A group over the bounds of one call is cut into calls within them,
// every key once and in order; a group within them is one call.
func TestSplitBulk(t *testing.T) {
	big := bytes.Repeat([]byte("v"), bulkMaxBytes/3)
	req := bulkReq{Kind: opPut}
	var idx []int
	for i := 0; i < 7; i++ {
		req.Keys = append(req.Keys, []byte{byte(i)})
		req.Vals = append(req.Vals, big)
		idx = append(idx, i)
	}
	parts := splitBulk(req, idx)
	var seen []int
	for _, p := range parts {
		size := 0
		for _, i := range p {
			size += len(req.Keys[i]) + len(req.Vals[i])
			seen = append(seen, i)
		}
		if size > bulkMaxBytes {
			t.Errorf("a call of %d bytes, over %d", size, bulkMaxBytes)
		}
	}
	if len(parts) != 4 || len(seen) != 7 {
		t.Fatalf("7 values of a third of the bound: %d calls, %d keys; want 4 calls (2+2+2+1), 7 keys", len(parts), len(seen))
	}
	for j, i := range seen {
		if i != j {
			t.Fatalf("keys out of order: %v", seen)
		}
	}
	small := bulkReq{Kind: opGet, Keys: make([][]byte, bulkMaxItems+1)}
	idx = idx[:0]
	for i := range small.Keys {
		small.Keys[i] = []byte{1}
		idx = append(idx, i)
	}
	if parts := splitBulk(small, idx); len(parts) != 2 || len(parts[0]) != bulkMaxItems {
		t.Fatalf("%d keys: %d calls, the first of %d; want 2, the first of %d", len(idx), len(parts), len(parts[0]), bulkMaxItems)
	}
	if parts := splitBulk(small, idx[:10]); len(parts) != 1 {
		t.Fatalf("10 keys: %d calls, want 1", len(parts))
	}
}
