// Package devserver runs a real Temporal server and the Temporal Web UI inside the calling
// process: the frontend, history, matching and worker services of go.temporal.io/server on a
// SQLite store (in memory, or a file that survives restarts), and the UI of
// github.com/temporalio/ui-server with its assets embedded in the module.
//
// It is what `flow-worker --dev` and gateflow's integration tests run on. It is the only
// package of gateflow that imports go.temporal.io/server: linking the server is heavy, so
// only the binaries and tests that need one import this package.
//
//	srv, err := devserver.Start(devserver.Options{Port: 7233, UIPort: 8233})
//	if err != nil { ... }
//	defer srv.Stop()
//	c, err := client.Dial(client.Options{HostPort: srv.FrontendAddress()})
package devserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/gateflow/gateflow/internal/searchattr"
)

const host = "127.0.0.1"

// Options configure an embedded server. The zero value is an in-memory server on free
// ports without a UI.
type Options struct {
	// Port is the frontend gRPC port. 0 picks a free port.
	Port int
	// UIPort is the Web UI port. 0 runs no UI.
	UIPort int
	// DBFile is a SQLite file that keeps the server's state across restarts; its schema is
	// created on first use. Empty keeps everything in memory.
	DBFile string
	// Namespace is created on start (with gateflow's search attributes). Default "default".
	Namespace string
	// LogLevel turns the server's own logs on ("debug", "info", "warn" or "error", written to
	// stderr). Empty keeps them quiet.
	LogLevel string
	// StartTimeout bounds how long Start waits for the frontend to answer. Default 30s.
	StartTimeout time.Duration
	// Codec, with a UI, is served on a free loopback port (under Auth: on the UI's port, to
	// logged-in browsers only) as the UI's codec server (POST
	// /encode and /decode), so payloads the workers encode with it (e.g. offloaded to a
	// blob store) still display in the UI. Nil: none.
	Codec converter.PayloadCodec
	// Auth, when set, requires callers to carry a bearer token (see Auth), and the Web UI a
	// login (package uigate) after which it acts as the person logged in. Nil: anyone who
	// reaches the frontend or the UI may call anything.
	Auth *Auth
	// Store, when set, keeps the server's state in external SQL databases (PostgreSQL,
	// MySQL) instead of SQLite; DBFile must then be empty. Their schema and the namespace
	// must exist already: package devserver/cluster sets up a PostgreSQL store.
	Store *SQLStore
}

// SQLStore names the external SQL databases of a server that does not run on SQLite.
// Their plugins (e.g. postgres12) must be linked in by the caller.
type SQLStore struct {
	// Persistence holds the namespaces, executions, histories and task queues.
	Persistence *config.SQL
	// Visibility holds the list of runs and their search attributes.
	Visibility *config.SQL
}

// NamespaceConfig is what Start writes into a fresh store to create namespace ns with
// gateflow's search attributes (for CreateNamespaces of an external store).
func NamespaceConfig(ns string) (*sqlite.NamespaceConfig, error) {
	nsConf, err := sqlite.NewNamespaceConfig("active", ns, false, searchattr.All())
	if err != nil {
		return nil, fmt.Errorf("devserver: namespace %s: %w", ns, err)
	}
	return nsConf, nil
}

// Server is a running embedded Temporal server.
type Server struct {
	opts      Options
	frontend  string
	uiAddress string
	server    temporal.Server
	ui        *uiServer
	codec     *codecServer
	codecURL  string

	// lock is held on the database file while the server runs (nil in memory).
	lock *dbLock

	// refreshTimer ends the forced search attribute refresh a minute after start when the
	// attributes were added then (stopRefreshing); nil otherwise.
	refreshTimer *time.Timer

	stopOnce sync.Once
	stopErr  error
}

// Start starts the server and returns once its frontend answers and the namespace is
// ready. Bad options and ports already in use are reported before anything starts.
func Start(opts Options) (_ *Server, err error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	logger, err := newLogger(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	logger = fatalLogger{logger} // ports.go: a port the server cannot bind is an error
	if err := checkPorts(opts); err != nil {
		return nil, err // bad port options are reported before anything starts
	}
	if opts.Store != nil {
		if opts.DBFile != "" {
			return nil, errors.New("devserver: a DBFile and an external Store exclude each other")
		}
		if opts.Store.Persistence == nil || opts.Store.Visibility == nil {
			return nil, errors.New("devserver: an external Store needs its Persistence and Visibility databases")
		}
		return startOnFreePorts(opts, logger, opts.Store, nil)
	}
	sqlConf, err := sqlConfig(opts.DBFile)
	if err != nil {
		return nil, err
	}
	var lock *dbLock
	if opts.DBFile != "" {
		if lock, err = lockDB(sqlConf.DatabaseName); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				lock.release()
			}
		}()
	}
	nsConf, err := NamespaceConfig(opts.Namespace)
	if err != nil {
		return nil, err
	}
	if err := sqlite.CreateNamespaces(sqlConf, nsConf); err != nil {
		return nil, fmt.Errorf("devserver: create namespace %s: %w", opts.Namespace, err)
	}
	return startOnFreePorts(opts, logger, &SQLStore{Persistence: sqlConf, Visibility: sqlConf}, lock)
}

// startOnFreePorts starts the server on ports picked for it, and on new ones when one was
// taken before the server could bind it (ports.go).
func startOnFreePorts(opts Options, logger log.Logger, store *SQLStore, lock *dbLock) (*Server, error) {
	var err error
	for range bindAttempts {
		var ports portSet
		if ports, err = pickPorts(opts); err != nil {
			return nil, err
		}
		var s *Server
		if s, err = startOn(opts, logger, ports, store, lock); !errors.Is(err, errPortTaken) {
			return s, err
		}
	}
	return nil, err
}

// startOn starts the server on a store whose schema and namespace exist.
func startOn(opts Options, logger log.Logger, ports portSet, store *SQLStore, lock *dbLock) (_ *Server, err error) {
	frontend := fmt.Sprintf("%s:%d", host, ports.frontend)
	conf := serverConfig(store, ports)
	hosts := map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(frontend),
		primitives.HistoryService:  static.SingleLocalHost(fmt.Sprintf("%s:%d", host, ports.history)),
		primitives.MatchingService: static.SingleLocalHost(fmt.Sprintf("%s:%d", host, ports.matching)),
		primitives.WorkerService:   static.SingleLocalHost(fmt.Sprintf("%s:%d", host, ports.worker)),
	}
	dc := dynamicConfig()
	services := temporal.DefaultServices
	serverOpts := []temporal.ServerOption{temporal.WithLogger(logger)}
	if opts.Auth != nil {
		if serverOpts, services, err = opts.Auth.apply(conf, hosts, dc, serverOpts, logger); err != nil {
			return nil, err
		}
	}
	live, refreshed := liveConfig(dc)
	srv, err := startServer(append(serverOpts, // ports.go
		temporal.WithConfig(conf),
		temporal.ForServices(services),
		temporal.WithStaticHosts(hosts),
		temporal.WithDynamicConfigClient(live),
		temporal.WithChainedFrontendGrpcInterceptors(LimitUpdates), // limits.go
	))
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, frontend: frontend, server: srv, lock: lock}
	added, err := s.waitReady()
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	s.stopRefreshing(refreshed, added)
	if opts.UIPort != 0 {
		s.uiAddress = fmt.Sprintf("%s:%d", host, opts.UIPort)
		if err := s.startUI(); err != nil {
			_ = srv.Stop()
			return nil, err
		}
	}
	return s, nil
}

// FrontendAddress is the host:port clients and workers dial.
func (s *Server) FrontendAddress() string { return s.frontend }

// UIURL is the Web UI's address, or "" when the server runs without a UI.
func (s *Server) UIURL() string {
	if s.uiAddress == "" {
		return ""
	}
	return "http://" + s.uiAddress
}

// CodecURL is the codec server's endpoint the UI calls, or "" when there is none. Under
// Auth it is on the UI's port, behind its login (uigate.CodecPath).
func (s *Server) CodecURL() string { return s.codecURL }

// Namespace is the namespace the server created on start.
func (s *Server) Namespace() string { return s.opts.Namespace }

// Stop stops the UI and the server and frees their ports. It is safe to call twice.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.ui != nil {
			s.ui.stop()
		}
		s.codec.stop()
		if s.refreshTimer != nil {
			s.refreshTimer.Stop()
		}
		if err := s.server.Stop(); err != nil {
			s.stopErr = fmt.Errorf("devserver: stop: %w", err)
		}
		s.lock.release()
	})
	return s.stopErr
}

// waitReady dials the frontend until it answers, then makes sure the namespace carries
// gateflow's search attributes (a database made by an older version may lack some).
func (s *Server) waitReady() (added []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StartTimeout)
	defer cancel()
	var lastErr error
	for ctx.Err() == nil {
		co := client.Options{HostPort: s.frontend, Namespace: s.opts.Namespace, Logger: quietSDKLogger{}}
		if s.opts.Auth != nil {
			co.Credentials = client.NewAPIKeyStaticCredentials(s.opts.Auth.Token)
			co.ConnectionOptions.TLSDisabled = true
		}
		c, err := client.DialContext(ctx, co)
		if err == nil {
			added, err = searchattr.Ensure(ctx, c.OperatorService(), s.opts.Namespace)
			c.Close()
			if err == nil {
				return added, nil
			}
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("devserver: frontend %s did not answer within %s: %w", s.frontend, s.opts.StartTimeout, lastErr)
}

type portSet struct{ frontend, history, matching, worker int }

// checkPorts reports bad port options: out of range, the same port twice, or a chosen
// port in use.
func checkPorts(opts Options) error {
	if opts.Port < 0 || opts.Port > 65535 {
		return fmt.Errorf("devserver: port %d out of range", opts.Port)
	}
	if opts.UIPort < 0 || opts.UIPort > 65535 {
		return fmt.Errorf("devserver: UI port %d out of range", opts.UIPort)
	}
	if opts.Port != 0 {
		if err := checkFree(opts.Port); err != nil {
			return fmt.Errorf("devserver: frontend port: %w", err)
		}
	}
	if opts.UIPort != 0 {
		if opts.UIPort == opts.Port {
			return fmt.Errorf("devserver: UI port %d is the frontend port", opts.UIPort)
		}
		if err := checkFree(opts.UIPort); err != nil {
			return fmt.Errorf("devserver: UI port: %w", err)
		}
	}
	return nil
}

// pickPorts checks the port options and picks free ports for the rest.
func pickPorts(opts Options) (portSet, error) {
	var p portSet
	var err error
	if err := checkPorts(opts); err != nil {
		return p, err
	}
	p.frontend = opts.Port
	if p.frontend == 0 {
		if p.frontend, err = freePort(); err != nil {
			return p, err
		}
		if p.frontend == opts.UIPort {
			return p, fmt.Errorf("devserver: UI port %d is the frontend port", opts.UIPort)
		}
	}
	for _, dst := range []*int{&p.history, &p.matching, &p.worker} {
		if *dst, err = freePort(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// freePort picks the ports of the server's services (a variable for the tests).
var freePort = FreePort

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		return 0, fmt.Errorf("devserver: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func checkFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", host, port))
	if err != nil {
		return fmt.Errorf("port %d is in use", port)
	}
	return l.Close()
}

func sqlConfig(dbFile string) (*config.SQL, error) {
	c := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	if dbFile == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.DatabaseName = "gateflow-" + hex.EncodeToString(b[:])
		c.ConnectAttributes["mode"] = "memory"
		c.ConnectAttributes["cache"] = "shared"
		return c, nil
	}
	abs, err := filepath.Abs(dbFile)
	if err != nil {
		return nil, fmt.Errorf("devserver: db file %s: %w", dbFile, err)
	}
	c.DatabaseName = abs
	c.ConnectAttributes["mode"] = "rwc"
	_, statErr := os.Stat(abs)
	switch {
	case statErr == nil:
		return c, nil
	case !errors.Is(statErr, os.ErrNotExist):
		return nil, fmt.Errorf("devserver: db file %s: %w", dbFile, statErr)
	}
	if st, err := os.Stat(filepath.Dir(abs)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("devserver: db file %s: folder %s does not exist", dbFile, filepath.Dir(abs))
	}
	if err := sqlite.SetupSchema(c); err != nil {
		_ = os.Remove(abs)
		return nil, fmt.Errorf("devserver: create schema in %s: %w", dbFile, err)
	}
	return c, nil
}

func serverConfig(store *SQLStore, p portSet) *config.Config {
	// One SQLite database holds both; an external store has a visibility database of its own.
	stores := map[string]config.DataStore{"default": {SQL: store.Persistence}}
	visibility := "default"
	if store.Visibility != store.Persistence {
		visibility = "visibility"
		stores[visibility] = config.DataStore{SQL: store.Visibility}
	}
	frontend := fmt.Sprintf("%s:%d", host, p.frontend)
	svc := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
	}
	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host},
		},
		Persistence: config.Persistence{
			DefaultStore:     "default",
			VisibilityStore:  visibility,
			NumHistoryShards: 1,
			DataStores:       stores,
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        "active",
			CurrentClusterName:       "active",
			ClusterInformation: map[string]cluster.ClusterInformation{
				"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			"frontend": svc(p.frontend),
			"history":  svc(p.history),
			"matching": svc(p.matching),
			"worker":   svc(p.worker),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

// liveConfig serves dc from a client whose values can change while the server runs;
// refreshed ends the forced refresh of the search attribute cache on every read, which the
// server needs only until the namespace's attributes exist in its cache.
func liveConfig(dc dynamicconfig.StaticClient) (live *dynamicconfig.MemoryClient, refreshed func()) {
	live = dynamicconfig.NewMemoryClient()
	for k, v := range dc {
		cleanup := live.OverrideValue(k, v)
		if k == dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key() {
			refreshed = cleanup
		}
	}
	if refreshed == nil {
		refreshed = func() {}
	}
	return live, refreshed
}

// stopRefreshing ends the forced refresh of the search attribute cache (10 extra database
// reads per run): at once when the namespace had gateflow's attributes already, else once
// every cache has read the ones just added (the server refreshes them each minute).
func (s *Server) stopRefreshing(refreshed func(), added []string) {
	if len(added) == 0 {
		refreshed()
		return
	}
	t := time.AfterFunc(searchAttributeCacheTTL, refreshed)
	s.refreshTimer = t
}

// searchAttributeCacheTTL is how long the server's search attribute caches may keep what
// they read (the server module's cacheRefreshInterval, 60 s), with a margin.
const searchAttributeCacheTTL = 65 * time.Second

func dynamicConfig() dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key():      true,
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 1000,
		dynamicconfig.FrontendPersistenceMaxQPS.Key():                    10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():                     45000,
		dynamicconfig.WorkflowPauseEnabled.Key():                         true,
	}
	for k, v := range limitsConfig() { // limits.go
		dc[k] = v
	}
	return dc
}

func newLogger(level string) (log.Logger, error) {
	switch strings.ToLower(level) {
	case "", "off", "none":
		return log.NewNoopLogger(), nil
	case "debug", "info", "warn", "error":
		return log.NewZapLogger(log.BuildZapLogger(log.Config{Level: strings.ToLower(level), Format: "console"})), nil
	default:
		return nil, fmt.Errorf("devserver: log level %q: want debug, info, warn, error or empty", level)
	}
}
