package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "working directory (default: a new temporary directory, removed afterwards)")
	rounds := fl.Int("rounds", 3, "how many times to SIGKILL and restart the member")
	writers := fl.Int("writers", 16, "concurrent writers")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "stowage-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	cfgDir, dataDir := filepath.Join(*dir, "config"), filepath.Join(*dir, "data")
	if err := writeConfigDir(cfgDir, dataDir, "stowage-demo"); err != nil {
		return err
	}
	logPath := filepath.Join(*dir, "node.log")
	fmt.Fprintf(stdout, "stowage demo: one member, local storage under %s\n", dataDir)
	fmt.Fprintf(stdout, "config: %s (seatunnel.yaml, hazelcast.yaml: map engine* with an EAGER map-store)\n\n", cfgDir)
	wl := newWorkload("engine_runningJobState", *writers, 64)
	res, err := crashRounds(ctx, cfgDir, logPath, wl, *rounds, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d rounds: %d writes acknowledged, %d keys checked after each restart, %d lost\n", *rounds, res.acks, res.checked, res.lost)
	if res.lost > 0 {
		return exitError(1)
	}
	fmt.Fprintln(stdout, "every acknowledged write came back after SIGKILL.")
	return nil
}

type crashResult struct {
	acks, checked, lost int
}

// crashRounds starts the node, writes for a random while, SIGKILLs it in
// the middle of writes, restarts it and checks every key, rounds times.
func crashRounds(ctx context.Context, cfgDir, logPath string, wl *workload, rounds int, out io.Writer) (crashResult, error) {
	var res crashResult
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	node, err := startNode(ctx, cfgDir, logPath)
	if err != nil {
		return res, err
	}
	defer func() {
		if node != nil {
			node.kill()
		}
	}()
	if _, err := node.waitHealthy(ctx, time.Minute); err != nil {
		return res, err
	}
	for r := 1; r <= rounds; r++ {
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		before := wl.acked()
		seed := rng.Uint64()
		go func() { wl.run(wctx, node.addr, 0, seed); close(done) }()
		// Let the writers run a random while, then kill the member under them.
		time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
		node.kill()
		<-done
		cancel()
		acked := wl.acked() - before
		node, err = startNode(ctx, cfgDir, logPath)
		if err != nil {
			return res, err
		}
		took, err := node.waitHealthy(ctx, time.Minute)
		if err != nil {
			return res, err
		}
		checked, bad, err := wl.verify(ctx, node.addr)
		if err != nil {
			return res, err
		}
		res.acks += acked
		res.checked += checked
		res.lost += len(bad)
		fmt.Fprintf(out, "round %d: %6d writes acknowledged, SIGKILL, restarted and loaded in %v, %d keys checked, %d wrong\n", r, acked, took.Round(time.Millisecond), checked, len(bad))
		for i, b := range bad {
			if i == 10 {
				fmt.Fprintf(out, "  ... and %d more\n", len(bad)-10)
				break
			}
			fmt.Fprintf(out, "  wrong: %s\n", b)
		}
	}
	return res, nil
}
