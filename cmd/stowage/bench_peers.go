package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stowage/stowage/bench"
	"github.com/stowage/stowage/fsbackend"
)

// peersBench runs stowage's checkpoint storage and SeaTunnel's
// checkpoint-storage-hdfs plugin (through the Java harness in bench/peers)
// on the same storage, interleaved, and prints the ratios.
type peersBench struct {
	src    string // the harness's Maven project (bench/peers)
	fsURI  string // "" for the local disk under dir
	dir    string
	rounds int
	// replication is the plugin's dfs.replication on HDFS.
	replication string
	opts        bench.PeerOptions
	say         func(string, ...any)
	// lookPath finds java and mvn; exec.LookPath outside tests.
	lookPath func(string) (string, error)
}

// errPeersSkipped says the peers bench could not run on this machine.
var errPeersSkipped = errors.New("peers bench skipped")

// check reports what is missing for the peers bench, wrapped in
// errPeersSkipped.
func (p *peersBench) check() error {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := p.lookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found on PATH (SeaTunnel's plugin runs on Java 17, built with Maven)", errPeersSkipped, tool)
		}
	}
	if p.src == "" {
		return fmt.Errorf("%w: bench/peers/pom.xml not found from the working directory or the executable; give --peers-src", errPeersSkipped)
	}
	if _, err := os.Stat(filepath.Join(p.src, "pom.xml")); err != nil {
		return fmt.Errorf("%w: --peers-src %s has no pom.xml", errPeersSkipped, p.src)
	}
	return nil
}

// findPeersSrc looks for bench/peers in the working directory and its
// parents, then beside the executable.
func findPeersSrc() string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for {
			p := filepath.Join(d, "bench", "peers")
			if _, err := os.Stat(filepath.Join(p, "pom.xml")); err == nil {
				return p
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return ""
}

// printRows prints each measured row as a line of JSON, indented, before
// a workload's ratio table.
func printRows[T any](w io.Writer, rows []T) {
	for _, r := range rows {
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "  %s\n", b)
	}
}

// harness checks that the peers bench can run (check) and returns the
// harness's jar, built when its sources changed (jar).
func (p *peersBench) harness(ctx context.Context) (string, error) {
	if err := p.check(); err != nil {
		return "", err
	}
	return p.jar(ctx)
}

// jar builds the harness with Maven in a copy under the user's cache
// directory, keyed by the hash of its sources, and returns the jar.
func (p *peersBench) jar(ctx context.Context) (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(p.src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "target" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(p.src, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	build := filepath.Join(cache, "stowage", "bench-peers", hex.EncodeToString(h.Sum(nil))[:16])
	jar := filepath.Join(build, "target", "seatunnel-peers-1.0.jar")
	if _, err := os.Stat(jar); err == nil {
		return jar, nil
	}
	for _, f := range files {
		rel, _ := filepath.Rel(p.src, f)
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(build, rel)), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(build, rel), b, 0o644); err != nil {
			return "", err
		}
	}
	p.say("peers: building the SeaTunnel harness with Maven in %s ...", build)
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "package", "-DskipTests")
	cmd.Dir = build
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the SeaTunnel harness (mvn package in %s): %w\n%s", build, err, out.String())
	}
	return jar, nil
}

// storage returns the back end properties, stowage's namespace and the
// plugin's fs.defaultFS and namespace, side by side under one base path.
func (p *peersBench) storage() (fsbackend.Properties, string, string, string, error) {
	stamp := fmt.Sprint(time.Now().UnixNano())
	if p.fsURI == "" {
		base := filepath.Join(p.dir, "peers")
		return fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"},
			base + "/stowage/", "file:///", base + "/seatunnel/", nil
	}
	u, err := url.Parse(p.fsURI)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return nil, "", "", "", fmt.Errorf("--peers with --fs %q: want hdfs://host:port/path", p.fsURI)
	}
	root := "hdfs://" + u.Host
	base := strings.TrimSuffix(u.Path, "/") + "/stowage-bench-peers/" + stamp
	return fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": root}, base + "/stowage/", root, base + "/seatunnel/", nil
}

// run measures and prints.
func (p *peersBench) run(ctx context.Context, stdout io.Writer) error {
	jar, err := p.harness(ctx)
	if err != nil {
		return err
	}
	props, ns, peerFS, peerNS, err := p.storage()
	if err != nil {
		return err
	}
	fsys, err := fsbackend.Open(ctx, props)
	if err != nil {
		return err
	}
	defer fsys.Close()
	var sizes []string
	for _, s := range p.opts.Sizes {
		sizes = append(sizes, fmt.Sprint(s))
	}
	where := "local disk under " + p.dir
	if p.fsURI != "" {
		where = p.fsURI
	}
	fmt.Fprintf(stdout, "checkpoint storage vs SeaTunnel checkpoint-storage-hdfs 2.3.8 on %s, %d interleaved rounds\n", where, p.rounds)
	var all []bench.PeerWorkload
	for r := 1; r <= p.rounds; r++ {
		runStowage := func() error {
			p.say("peers: round %d: stowage ...", r)
			res, err := bench.PeerCheckpoints(ctx, fsys, ns, r, p.opts)
			all = append(all, res...)
			return err
		}
		runPeer := func() error {
			p.say("peers: round %d: SeaTunnel ...", r)
			res, err := p.runPeer(ctx, jar, peerFS, peerNS, r, strings.Join(sizes, ","))
			all = append(all, res...)
			return err
		}
		if err := alternate(r, runStowage, runPeer); err != nil {
			return err
		}
	}
	printRows(stdout, all)
	printPeerRatios(stdout, all)
	return nil
}

// runPeer runs one round of the harness and decodes its JSON lines.
func (p *peersBench) runPeer(ctx context.Context, jar, fsURI, ns string, round int, sizes string) ([]bench.PeerWorkload, error) {
	args := []string{"-Xmx1g", "-jar", jar, "--fs", fsURI, "--namespace", ns,
		"--round", fmt.Sprint(round), "--sizes", sizes, "--stores", fmt.Sprint(p.opts.Stores),
		"--checkpoints", fmt.Sprint(p.opts.Checkpoints), "--lookups", fmt.Sprint(p.opts.Lookups)}
	if p.fsURI != "" {
		// The Java client asks for its own default of 3 replicas, which
		// a cluster of fewer DataNodes never completes; stowage's client
		// takes the NameNode's default. Both then write the same number.
		args = append(args, "--hadoop", "dfs.replication="+p.replication)
	}
	cmd := exec.CommandContext(ctx, "java", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("SeaTunnel harness: %w\n%s", err, tail(stderr.String(), 4000))
	}
	var res []bench.PeerWorkload
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var w bench.PeerWorkload
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			return nil, fmt.Errorf("SeaTunnel harness: line %q: %w", line, err)
		}
		res = append(res, w)
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("SeaTunnel harness printed no results\n%s", tail(stderr.String(), 4000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// printPeerRatios prints, per workload, the median over rounds of each
// system and the ratio of stowage's speed to SeaTunnel's (above 1:
// stowage is faster).
func printPeerRatios(w io.Writer, all []bench.PeerWorkload) {
	type key struct {
		workload string
		size     int
	}
	var keys []key
	vals := map[key]map[string][]float64{}
	for _, r := range all {
		k := key{r.Workload, r.StateBytes}
		if vals[k] == nil {
			vals[k] = map[string][]float64{}
			keys = append(keys, k)
		}
		v := float64(r.MedianNS) / 1e6 // ms
		if r.Workload == "store" {
			v = r.PerSec
		}
		vals[k][r.System] = append(vals[k][r.System], v)
	}
	med := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	for _, k := range keys {
		var st, sea float64
		var peer string
		for sys, xs := range vals[k] {
			if sys == "stowage" {
				st = med(xs)
			} else {
				peer, sea = sys, med(xs)
			}
		}
		if k.workload == "delete-files" {
			// Stowage's delete until its background removal is done,
			// against SeaTunnel's delete, whose call does it all.
			for sys, xs := range vals[key{"delete", 0}] {
				if sys != "stowage" {
					peer, sea = sys, med(xs)
				}
			}
			if st != 0 && sea != 0 {
				fmt.Fprintf(w, "  delete until the job's files are gone: stowage %.2f ms, %s's delete %.2f ms (median of rounds): speed ratio stowage/SeaTunnel %.2f\n", st, peer, sea, sea/st)
			}
			continue
		}
		if st == 0 || sea == 0 {
			continue
		}
		switch k.workload {
		case "store":
			fmt.Fprintf(w, "  store %d KiB states: stowage %.0f checkpoints/s, %s %.0f/s: ratio %.2f\n", k.size>>10, st, peer, sea, st/sea)
		default:
			fmt.Fprintf(w, "  %s: stowage %.2f ms, %s %.2f ms (median of rounds): speed ratio stowage/SeaTunnel %.2f\n", k.workload, st, peer, sea, sea/st)
		}
	}
}

// alternate runs a then b in odd rounds and b then a in even ones, so
// that neither side of a comparison always runs first on a warmed-up
// machine; it stops at the first error.
func alternate(round int, a, b func() error) error {
	if round%2 == 0 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}
