package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/logscrub"
)

func runNode(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("node", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("config-dir", "", "directory holding seatunnel.yaml and hazelcast.yaml (required)")
	role := fl.String("role", "", "master or worker: read hazelcast-master.yaml or hazelcast-worker.yaml instead of hazelcast.yaml, as seatunnel-cluster.sh -r does")
	addr := fl.String("http", "127.0.0.1:5802", "address of the HTTP API")
	httpsAddr := fl.String("https", "", "address of the HTTP API when seatunnel.engine.http.enable-https is on (default: the host of --http with https-port)")
	insecure := fl.Bool("insecure-http", false, "allow the HTTP API on an address other than loopback without TLS and authentication (enable-https and enable-basic-auth or bearer-token-file)")
	port := fl.Int("port", 0, "member port (overrides hazelcast.yaml network.port)")
	verbose := fl.Bool("v", false, "log at debug level")
	leave := fl.Duration("leave-timeout", 60*time.Second, "on SIGTERM, how long to wait for the partitions to be handed over before stopping")
	grace := fl.Duration("backup-grace", 0, "how long the master holds the backup slots of a member that failed or was cut off, for it to come back and be brought up to date by deltas (0: give them to the others at once)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--config-dir is required")
	}
	cfg, err := config.LoadRole(*dir, *role)
	if err != nil {
		return err
	}
	if *port != 0 {
		cfg.Hazelcast.Network.Port = *port
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := logscrub.Logger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	logConfig(log, cfg, *role)
	api, err := apiSecurity(cfg, *addr, *httpsAddr, *insecure, log)
	if err != nil {
		return err
	}
	if *grace < 0 {
		return fmt.Errorf("--backup-grace %v is negative", *grace)
	}
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg, Logger: log, BackupGrace: *grace})
	if err != nil {
		return err
	}
	defer node.Close()
	ln, err := net.Listen("tcp", api.addr)
	if err != nil {
		return err
	}
	hopts := []httpapi.Option{httpapi.WithSecurity(api.sec)}
	// The checkpoint namespace's lease is taken with the storage: a second
	// cluster on it stops here, as on a map store's namespace.
	if cps, err := node.OpenCheckpointStorage(ctx); errors.Is(err, stowage.ErrNamespaceInUse) {
		return err
	} else if err != nil {
		log.Warn("stowage node: checkpoint storage not shown on the status page", "err", err)
	} else {
		defer cps.Close()
		hopts = append(hopts, httpapi.WithCheckpoints(cps))
	}
	srv := httpapi.NewServer(httpapi.Handler(node, hopts...), api.tls, httpapi.DefaultTimeouts(), log)
	scheme := "http"
	if api.tls != nil {
		scheme = "https"
	}
	log.Info("stowage node serving", scheme, ln.Addr().String(), "cluster", cfg.Hazelcast.ClusterName,
		"auth", api.sec.Authenticates(), "loopback-host-only", api.sec.LoopbackHost)
	fmt.Fprintf(stdout, "listening on %s://%s\n", scheme, ln.Addr())
	errc := make(chan error, 1)
	go func() {
		if api.tls != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	go func() {
		if err := node.WaitLoaded(ctx); err == nil {
			log.Info("stowage node loaded", "maps", len(node.Maps()))
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// SIGTERM or interrupt: hand the partitions over to the other
	// members (a graceful leave), then stop.
	sctx, cancel := context.WithTimeout(context.Background(), *leave)
	defer cancel()
	if err := node.Leave(sctx); err != nil {
		log.Warn("stowage node: leave", "err", err)
	}
	_ = srv.Shutdown(sctx)
	return nil
}

// logConfig says once, in one line, which keys of the configuration files
// stowage accepted without acting on them, and what a worker role means
// here.
func logConfig(log *slog.Logger, cfg *config.Config, role string) {
	if ig := cfg.Ignored(); len(ig) > 0 {
		log.Info("accepted, no effect: " + strings.Join(ig, ", "))
	}
	if role == config.RoleWorker {
		log.Warn("stowage node: role worker holds partitions like a master: stowage has no lite members")
	}
}
