package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/uigate"
)

// devAuthFlags are --auth and --auth-dev-key: verified callers on the embedded server.
type devAuthFlags struct {
	on  bool
	key string
}

func (f *devAuthFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "auth", false, "with --dev: callers need a bearer token (mint one with `flowctl login NAME`, dev only); the server checks it and gateflow's Authorizer decides who may do what")
	fs.StringVar(&f.key, "auth-dev-key", "", "with --dev --auth: the dev token signing key file, created when missing (default: next to --db-file, else in the temporary directory)")
}

func (f *devAuthFlags) check(dev bool) error {
	if f.on && !dev {
		return fmt.Errorf("--auth needs --dev (on a cluster, configure the server's claim mapper and authorizer; see docs/people-and-security.md, Security)")
	}
	if f.key != "" && !f.on {
		return fmt.Errorf("--auth-dev-key needs --auth")
	}
	return nil
}

// devAuth is what --dev --auth set up.
type devAuth struct {
	keyPath string
	created bool
	key     *devauth.Key
	// server is the embedded server's auth; worker is the token this worker dials with.
	server *devserver.Auth
	worker string
}

// workerSubject is the subject of the worker's own token.
const workerSubject = "gateflow-worker"

func (f *devAuthFlags) setup(dbFile, namespace string) (*devAuth, error) {
	if !f.on {
		return nil, nil
	}
	path := f.key
	if path == "" {
		path = devauth.DefaultKeyPath(dbFile)
	}
	key, created, err := devauth.LoadOrCreate(path)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	now := time.Now()
	admin, err := key.Mint(devauth.Token{Subject: "gateflow-dev-server", Permissions: []string{devauth.SystemScope + ":" + devauth.RoleAdmin}, TTL: time.Hour}, now)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	// The worker's token outlives any dev session; it never leaves this process.
	worker, err := key.Mint(devauth.Token{Subject: workerSubject, Permissions: []string{namespace + ":" + devauth.RoleWorker}, TTL: 24 * 365 * time.Hour}, now)
	if err != nil {
		return nil, fmt.Errorf("--auth: %w", err)
	}
	return &devAuth{keyPath: path, created: created, key: key, worker: worker,
		server: &devserver.Auth{Key: key.Public(), KeyID: key.ID, Token: admin}}, nil
}

// printBanner is the banner's lines on how to get a token, and how to log in to the Web UI
// at ui ("" without a UI).
func (d *devAuth) printBanner(out io.Writer, addrFlag, ui string) {
	if d == nil {
		return
	}
	state := "kept"
	if d.created {
		state = "created"
	}
	fmt.Fprintf(out, "  Callers          verified: a bearer token is required (DEV ONLY tokens, key %s %s)\n", d.keyPath, state)
	fmt.Fprintf(out, "                   get one: flowctl%s login NAME --dev-key %s\n", addrFlag, d.keyPath)
	if ui != "" {
		fmt.Fprintf(out, "                   Web UI login: %s%s (it acts as you); a link: flowctl%s login NAME --dev-key %s --web %s\n",
			ui, uigate.LoginPath, addrFlag, d.keyPath, ui)
	}
	fmt.Fprintf(out, "                   other tools: eval \"$(flowctl%s login NAME --dev-key %s --export)\"\n", addrFlag, d.keyPath)
}
