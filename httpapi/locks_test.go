package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestLocks(t *testing.T) {
	_, srv := node(t, t.TempDir())
	base := srv.URL + "/v1/maps/jobs"
	lock := func(q string) (int, map[string]any) {
		t.Helper()
		code, body := do(t, "POST", base+"/locks/k1"+q, "")
		var ans map[string]any
		if code == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &ans); err != nil {
				t.Fatalf("lock answer %q: %v", body, err)
			}
		}
		return code, ans
	}
	code, a1 := lock("?lease=1m")
	if code != http.StatusOK || a1["owner"] == "" || a1["fence"] == "" {
		t.Fatalf("lock: %d %v", code, a1)
	}
	owner := a1["owner"].(string)
	if code, body := do(t, "GET", base+"/locks/k1", ""); code != http.StatusOK || !strings.Contains(body, `"locked": true`) {
		t.Fatalf("is locked: %d %s", code, body)
	}
	if code, _ := lock("?owner=other&wait=20ms"); code != http.StatusConflict {
		t.Fatalf("lock by another owner: %d, want 409", code)
	}
	// The holder's write passes.
	if code, body := do(t, "PUT", base+"/entries/k1?owner="+owner, "v"); code != http.StatusNoContent {
		t.Fatalf("holder's put: %d %s", code, body)
	}
	for _, bad := range []string{"?lease=soon", "?wait=-1s", "?lease=1000h", "?owner=" + strings.Repeat("x", 300)} {
		if code, _ := lock(bad); code != http.StatusBadRequest {
			t.Errorf("lock%s: %d, want 400", bad, code)
		}
	}
	if code, _ := do(t, "DELETE", base+"/locks/k1?owner=other", ""); code != http.StatusConflict {
		t.Fatalf("unlock by another owner: %d, want 409", code)
	}
	if code, _ := do(t, "DELETE", base+"/locks/k1", ""); code != http.StatusBadRequest {
		t.Fatalf("unlock without owner: %d, want 400", code)
	}
	code, a2 := lock("?owner=" + owner) // reentrant
	if code != http.StatusOK {
		t.Fatalf("reentrant lock: %d", code)
	}
	if a2["fence"] == a1["fence"] {
		t.Fatalf("the same fence twice: %v", a2["fence"])
	}
	if code, _ := do(t, "DELETE", base+"/locks/k1?force=true", ""); code != http.StatusNoContent {
		t.Fatalf("force unlock: %d", code)
	}
	if code, body := do(t, "GET", base+"/locks/k1", ""); code != http.StatusOK || !strings.Contains(body, `"locked": false`) {
		t.Fatalf("is locked after force unlock: %d %s", code, body)
	}
	if code, body := do(t, "PUT", base+"/entries/k1", "w"); code != http.StatusNoContent {
		t.Fatalf("put after unlock: %d %s", code, body)
	}
}
