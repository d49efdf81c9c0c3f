package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds a Chromium or Chrome binary (Debian's package:
// chromium; scripts/test installs it).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// outputDir is where a test leaves files for people: $TEST_OUTPUT_DIR, else
// the test's temporary directory.
func outputDir(t *testing.T) string {
	if d := os.Getenv("TEST_OUTPUT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func putEntry(t *testing.T, addr, mapName, key, value string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/v1/maps/"+url.PathEscape(mapName)+"/entries/"+url.PathEscape(key), strings.NewReader(value))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT %s/%s: %s", mapName, key, resp.Status)
	}
}

// pageView is what the status page shows, read from its DOM.
type pageView struct {
	Refreshed string          `json:"refreshed"`
	Members   map[string]bool `json:"members"` // id -> live
	Maps      []string        `json:"maps"`
	Owners    []string        `json:"owners"`
	TakeOvers int             `json:"takeovers"`
	// ClusterPromotions counts the fail-overs of every member the page
	// lists; LiveBytes is each map's live bytes ("" when not known).
	ClusterPromotions int               `json:"cluster_promotions"`
	LiveBytes         map[string]string `json:"live_bytes"`
	Images            int               `json:"images"`
	Title             string            `json:"title"`
	Extra             map[string]string `json:"extra"`
}

const readPage = `(() => ({
  refreshed: document.body.getAttribute("data-refreshed") || "",
  members: Object.fromEntries(Array.from(document.querySelectorAll("#members tr[data-id]")).map(r => [r.dataset.id, r.dataset.live === "true"])),
  maps: Array.from(document.querySelectorAll("#maps tr[data-map] td:first-child")).map(td => td.textContent),
  owners: Array.from(document.querySelectorAll("#grid div")).map(d => d.dataset.owner || ""),
  takeovers: document.querySelectorAll("#takeovers tbody tr td:nth-child(3)").length,
  cluster_promotions: document.querySelectorAll("#cluster-takeovers tr[data-source=promotion]").length,
  live_bytes: Object.fromEntries(Array.from(document.querySelectorAll("#maps tr[data-map]")).map(r => [r.dataset.map, (r.querySelector("td[data-live-bytes]") || {dataset: {}}).dataset.liveBytes || ""])),
  images: document.querySelectorAll("main img").length,
  title: document.title,
}))()`

// The status page in a real browser: three member processes, the page of
// the first shows the members and maps /v1/cluster and /v1/maps report
// (a map name that is HTML shows as text), then a member is SIGKILLed and
// the page shows it gone and its partitions taken by the others.
func TestStatusPageInBrowser(t *testing.T) {
	browser := chromiumPath()
	if browser == "" {
		t.Skip("no chromium binary on PATH (Debian: apt-get install chromium); the status page's browser test needs one")
	}
	c := testCluster(t, "page", 3)
	startMembers(t, c, 3)
	addr := c.nodes[0].addr
	const hostile = `engine<img src=x onerror=document.title='injected'>`
	for i := range 30 {
		putEntry(t, addr, "engine_runningJobInfo", fmt.Sprintf("job-%d", i), "state")
	}
	putEntry(t, addr, hostile, "k", "v")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 1100))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	// waitPage reads the page until ok holds of what it shows.
	waitPage := func(what string, limit time.Duration, ok func(pageView) bool) pageView {
		t.Helper()
		deadline := time.Now().Add(limit)
		for {
			v, err := chromedp.Run(bctx, chromedp.Evaluate[pageView](readPage))
			if err != nil {
				t.Fatalf("read the page: %v", err)
			}
			if v.Refreshed != "" && ok(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page shows %+v after %v", what, v, limit)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var ci struct {
		Members             []string       `json:"members"`
		PartitionsPerMember map[string]int `json:"partitions_per_member"`
	}
	var maps []struct {
		Name string `json:"name"`
	}
	getJSON(t, "http://"+addr+"/v1/cluster", &ci)
	getJSON(t, "http://"+addr+"/v1/maps", &maps)
	v := waitPage("the three members and both maps", 30*time.Second, func(v pageView) bool {
		return len(v.Members) == 3 && len(v.Maps) == 2
	})
	for _, id := range ci.Members {
		if live, shown := v.Members[id]; !shown || !live {
			t.Errorf("member %s of /v1/cluster: shown %v, live %v", id, shown, live)
		}
	}
	var wantMaps []string
	for _, m := range maps {
		wantMaps = append(wantMaps, m.Name)
	}
	slices.Sort(wantMaps)
	if !slices.Equal(v.Maps, wantMaps) {
		t.Errorf("maps shown %q, /v1/maps has %q", v.Maps, wantMaps)
	}
	if v.Images != 0 || v.Title == "injected" || !slices.Contains(v.Maps, hostile) {
		t.Errorf("a map name that is HTML was not shown as text: %d images, title %q", v.Images, v.Title)
	}
	if got := countOwners(v.Owners); len(v.Owners) != 271 || !mapsEqual(got, ci.PartitionsPerMember) {
		t.Errorf("partition cells %d, per owner %v; /v1/cluster says %v", len(v.Owners), got, ci.PartitionsPerMember)
	}

	// SIGKILL the last member; the page of the first shows the fail-over.
	victim := c.nodes[2]
	var vs struct {
		Self string `json:"self"`
	}
	getJSON(t, "http://"+victim.addr+"/v1/status", &vs)
	before := v.TakeOvers
	c.kill(victim)
	killed := time.Now()
	v = waitPage("the fail-over", 90*time.Second, func(v pageView) bool {
		live, shown := v.Members[vs.Self]
		owned := countOwners(v.Owners)
		return (!shown || !live) && owned[vs.Self] == 0 && len(v.Owners) == 271 && owned[""] == 0 && len(owned) == 2
	})
	t.Logf("the page showed the fail-over %v after the SIGKILL", time.Since(killed).Round(time.Millisecond))
	buf, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(outputDir(t), "status-page.png")
	if err := os.WriteFile(shot, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	// The page and /v1/cluster agree once both show the same table.
	agreeBy := time.Now().Add(30 * time.Second)
	for {
		ci.Members, ci.PartitionsPerMember = nil, nil // decoding into a map merges
		getJSON(t, "http://"+addr+"/v1/cluster", &ci)
		v = waitPage("a refresh", 10*time.Second, func(pageView) bool { return true })
		got := countOwners(v.Owners)
		if mapsEqual(got, ci.PartitionsPerMember) && !slices.Contains(ci.Members, vs.Self) && len(ci.Members) == 2 {
			break
		}
		if time.Now().After(agreeBy) {
			t.Fatalf("after the fail-over the page shows %v per owner, /v1/cluster %v of members %v", got, ci.PartitionsPerMember, ci.Members)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The first member took some of the victim's partitions over, unless
	// the other survivor took them all; either way some member did, and
	// the page of the member that did lists it.
	var st struct {
		TakeOvers []struct {
			Source string `json:"source"`
			From   string `json:"from"`
		} `json:"take_overs"`
	}
	getJSON(t, "http://"+addr+"/v1/status", &st)
	promoted := 0
	for _, to := range st.TakeOvers {
		if to.Source == "promotion" {
			promoted++
		}
	}
	if promoted > 0 {
		waitPage("the take-over listed", 10*time.Second, func(v pageView) bool { return v.TakeOvers > before })
	} else {
		t.Logf("the first member took none of the victim's partitions over: %+v", st.TakeOvers)
	}
	// Whichever survivor promoted the victim's partitions, the page of the
	// first lists it among the cluster's take-overs, and every map's live
	// bytes.
	v = waitPage("a fail-over among the cluster's take-overs", 10*time.Second, func(v pageView) bool { return v.ClusterPromotions > 0 })
	for _, name := range v.Maps {
		if v.LiveBytes[name] == "" {
			t.Errorf("map %s: no live bytes on the page (%v)", name, v.LiveBytes)
		}
	}
}

func countOwners(owners []string) map[string]int {
	out := map[string]int{}
	for _, o := range owners {
		out[o]++
	}
	return out
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
