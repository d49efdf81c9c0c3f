package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stowage/stowage/bench/sim"
)

// simSummary is one cluster size's simulation, summed up.
type simSummary struct {
	Members int `json:"members"`
	// Join: convergence after a join (median, worst), and the worst
	// ratio of copies to the least a change needs over every step.
	JoinP50      time.Duration `json:"join_converge_p50_ns"`
	JoinMax      time.Duration `json:"join_converge_max_ns"`
	WorstCopies  float64       `json:"worst_copies_over_least"`
	JoinBytes    int64         `json:"data_bytes_last_join"`
	NewMaster    time.Duration `json:"new_master_ns"`
	MasterDone   time.Duration `json:"master_failover_converge_ns"`
	FailP50      time.Duration `json:"fail_converge_p50_ns"`
	FailMax      time.Duration `json:"fail_converge_max_ns"`
	ControlPer   float64       `json:"control_bytes_per_member_per_s"`
	TablePer     float64       `json:"table_bytes_per_member_per_s"`
	LeasePer     float64       `json:"lease_bytes_per_member_per_s"`
	GossipPer    float64       `json:"gossip_bytes_per_member_per_s,omitempty"`
	HeapPer      int64         `json:"heap_bytes_per_member"`
	Acked        int64         `json:"writes_acked"`
	Lost         int64         `json:"writes_lost"`
	FailedWrites int64         `json:"writes_failed"`
	// The "cut and back" step: from the cut to the cluster safe with the
	// member back, and the owners and replica slots that differ from
	// the table before the cut.
	CutConverge time.Duration `json:"cut_back_converge_ns"`
	CutOwners   int           `json:"cut_back_owners_moved"`
	CutCopies   int           `json:"cut_back_copies"`
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("sim", flag.ContinueOnError)
	fl.SetOutput(stderr)
	sizes := fl.String("members", "10,25,50,100", "cluster sizes to simulate, comma-separated")
	backups := fl.Int("backups", 1, "sync backups of the simulated map")
	writers := fl.Int("writers", 4, "writers running throughout")
	asJSON := fl.Bool("json", false, "print one JSON object per size")
	steps := fl.Bool("steps", false, "print every step (join, fail, ...) to stderr as it converges")
	noFail := fl.Bool("no-failures", false, "stop after the cut and back step (with --backup-grace, the failures would each wait for the grace)")
	grace := fl.Duration("backup-grace", 0, "the members' backup grace (stowage node --backup-grace): the cut member gets its slots back; failures then converge only once it ran out")
	gossipOnly := fl.Bool("gossip-only", false, "measure only the memberlist members' traffic")
	settle := fl.Duration("gossip-settle", 15*time.Second, "how long the memberlist members run before their traffic is counted (the news of their joins dies down)")
	gossip := fl.Duration("gossip-window", 35*time.Second, "also run N real memberlist members on 127.0.0.1 and count their traffic over this window (0: skip); it should cover a push/pull interval (30 s)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return fmt.Errorf("--members %q: %q is not a cluster size of 2 or more", *sizes, f)
		}
		ns = append(ns, n)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !*asJSON {
		fmt.Fprintln(tw, "members\tjoin p50\tjoin max\tcopies/least\tnew master\tmaster fail-over\tfail p50\tfail max\tcut+back\tcut+back owners/copies\ttable+lease B/s/member\tgossip B/s/member\theap/member\tacked\tlost\t")
	}
	for _, n := range ns {
		fmt.Fprintf(stderr, "simulating %d members...\n", n)
		var res sim.Result
		var err error
		if !*gossipOnly {
			o := sim.Options{Members: n, Backups: *backups, Writers: *writers, Grace: *grace, NoFailures: *noFail}
			if *steps {
				o.Step = func(st sim.Step) { printStep(stderr, st) }
			}
			if res, err = sim.Run(ctx, o); err != nil {
				return err
			}
		}
		s := summarize(n, res)
		if *gossip > 0 {
			if s.GossipPer, err = sim.Gossip(ctx, n, *settle, *gossip); err != nil {
				return err
			}
		}
		if *asJSON {
			b, _ := json.Marshal(s)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" }
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%.0f+%.0f\t%.0f\t%d KiB\t%d\t%d\t\n", s.Members, ms(s.JoinP50), ms(s.JoinMax), s.WorstCopies,
			ms(s.NewMaster), ms(s.MasterDone), ms(s.FailP50), ms(s.FailMax), ms(s.CutConverge), s.CutOwners, s.CutCopies, s.TablePer, s.LeasePer, s.GossipPer, s.HeapPer>>10, s.Acked, s.Lost)
		if s.Lost != 0 {
			return fmt.Errorf("%d members: %d acknowledged writes lost", n, s.Lost)
		}
	}
	return tw.Flush()
}

func summarize(n int, res sim.Result) simSummary {
	s := simSummary{Members: n, HeapPer: res.HeapPerMember, Acked: res.Acked, Lost: res.Lost, FailedWrites: res.Failed}
	var joins, fails []time.Duration
	for _, st := range res.Steps {
		if st.Ideal > 0 {
			s.WorstCopies = max(s.WorstCopies, float64(st.Copies)/st.Ideal)
		}
		switch {
		case st.What == "join":
			joins = append(joins, st.Converge)
			if st.Members == n {
				s.ControlPer, s.JoinBytes = st.ControlPerMember, st.DataBytes
				s.TablePer, s.LeasePer = st.QuietTable, st.QuietLease
			}
		case st.What == "kill master":
			s.NewMaster, s.MasterDone = st.NewMaster, st.Converge
		case st.What == "cut and back":
			s.CutConverge, s.CutOwners, s.CutCopies = st.Converge, st.Owners, st.Copies
		default:
			fails = append(fails, st.Converge)
		}
	}
	s.JoinP50, s.JoinMax = p50max(joins)
	s.FailP50, s.FailMax = p50max(fails)
	return s
}

func p50max(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1]
}

// printStep writes one step's figures on a line.
func printStep(w io.Writer, st sim.Step) {
	line := fmt.Sprintf("%-12s %3d members: tables in %v, converged in %v, %d owners moved, %d copies (least %.1f), table %d B, lease %d B, data %d B; idle table+lease %.0f+%.0f B/s per member",
		st.What, st.Members, st.Tables.Round(time.Millisecond), st.Converge.Round(time.Millisecond), st.Owners, st.Copies, st.Ideal, st.TableBytes, st.LeaseBytes, st.DataBytes, st.QuietTable, st.QuietLease)
	if st.NewMaster > 0 {
		line += fmt.Sprintf(", new master's table in %v", st.NewMaster.Round(time.Millisecond))
	}
	fmt.Fprintln(w, line)
}
