// Command temporal-pg runs gateflow's Temporal server on PostgreSQL (package
// devserver/cluster) as a process of its own, so the cluster tests can kill and restart
// it. It prints "temporal-pg: ready ADDRESS" once the frontend answers and stops cleanly
// on SIGINT or SIGTERM.
//
//	temporal-pg --pg-port 5432 --port 7233
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gateflow/gateflow/internal/devserver/cluster"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("temporal-pg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o cluster.Options
	fs.StringVar(&o.Host, "pg-host", "127.0.0.1", "PostgreSQL host")
	fs.IntVar(&o.Port, "pg-port", 5432, "PostgreSQL port")
	fs.StringVar(&o.User, "pg-user", "postgres", "PostgreSQL user")
	fs.StringVar(&o.Database, "db", "temporal", "database of the server's state (created when missing)")
	fs.StringVar(&o.VisibilityDatabase, "visibility-db", "temporal_visibility", "database of the list of runs (created when missing)")
	fs.IntVar(&o.Server.Port, "port", 7233, "the frontend gRPC port on 127.0.0.1")
	fs.StringVar(&o.Server.Namespace, "namespace", "default", "namespace created with gateflow's search attributes")
	fs.StringVar(&o.Server.LogLevel, "log-level", "", "the server's own logs on stderr: debug, info, warn, error (default: none)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "temporal-pg: unexpected arguments %q\n", fs.Args())
		return 2
	}
	o.Password = os.Getenv("PGPASSWORD")
	srv, err := cluster.Start(o)
	if err != nil {
		fmt.Fprintln(stderr, "temporal-pg:", err)
		return 1
	}
	fmt.Fprintln(stdout, "temporal-pg: ready", srv.FrontendAddress())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	if err := srv.Stop(); err != nil {
		fmt.Fprintln(stderr, "temporal-pg:", err)
		return 1
	}
	fmt.Fprintln(stdout, "temporal-pg: stopped")
	return 0
}
