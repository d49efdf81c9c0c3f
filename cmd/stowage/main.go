package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/stowage/stowage/fsbackend"
	_ "github.com/stowage/stowage/fsbackend/all"
)

const usage = `usage: stowage <command> [flags]

commands:
  node     --config-dir DIR [--http ADDR]   run one member (joining the member list) and serve the HTTP API;
           [--role master|worker]           --role reads hazelcast-master.yaml or hazelcast-worker.yaml;
           [--https ADDR] [--insecure-http] TLS and auth from seatunnel.engine.http (docs/security.md)
  demo     [--dir DIR] [--members N]        3 members: write job state, SIGKILL one, then all, restart, show it came back;
           [--keep-running]                 --keep-running leaves them serving (status page) until Ctrl-C
  inspect  (--config-dir DIR | --fs URI --namespace NS --cluster NAME | --bbolt FILE) [--json] SUBCOMMAND
           maps | stats MAP | dump MAP | get MAP KEY | verify | compact [--force] MAP
           checkpoints list [JOB] | checkpoints show JOB PIPELINE [CHECKPOINT] | checkpoints verify
           (compact refuses a map with damage beyond a torn tail unless --force, which drops it)
  bench    [--quick] [--dir DIR] [--fs URI] write-through, write-behind, EAGER load, disk use and checkpoint storage against
           [--cluster-only] [--failovers N] references, then 3 members: puts/s against one member, fail-over time
           [--kill-master] [--freeze] [--write-behind-only]
           [--write-only] [--load-only] [--rounds N] [--cpuprofile FILE]
  sim      [--members 10,25,50,100]         a cluster of N in-process members grown one by one, shrunk by failures,
           [--backups B] [--json]           its master killed, with writers: convergence, copies, traffic, lost writes;
           [--gossip-window D]              and N real memberlist members' traffic

Run 'stowage <command> -h' for the flags of one command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage makes run print the usage and exit 2.
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "node":
		err = runNode(ctx, args[1:], stdout, stderr)
	case "demo":
		err = runDemo(ctx, args[1:], stdout, stderr)
	case "inspect":
		err = runInspect(ctx, args[1:], stdout, stderr)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "sim":
		err = runSim(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "stowage: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var ex exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprint(stderr, usage)
		return 2
	case errors.As(err, &ex):
		return int(ex)
	default:
		// A URI's user information (--fs s3a://id:secret@bucket, an
		// endpoint) never reaches the terminal.
		fmt.Fprintf(stderr, "stowage %s: %s\n", args[0], fsbackend.RedactURIs(err.Error()))
		return 1
	}
}

// exitError ends the command with a status, its message already printed.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
