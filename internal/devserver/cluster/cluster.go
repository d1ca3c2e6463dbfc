package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/common/resolver"
	dbschemas "go.temporal.io/server/schema"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	"go.temporal.io/server/schema/sqlite"

	"github.com/gateflow/gateflow/internal/devserver"
)

// Options say where PostgreSQL is and how the Temporal server on it listens.
type Options struct {
	// Host and Port of the PostgreSQL server. Default 127.0.0.1; Port is required.
	Host string
	Port int
	// User and Password to connect with. Default user postgres, no password.
	User     string
	Password string
	// Database and VisibilityDatabase are created when missing. Default temporal and
	// temporal_visibility.
	Database           string
	VisibilityDatabase string
	// Server configures the Temporal server itself (Port, Namespace, LogLevel, ...); its
	// DBFile and Store must be empty.
	Server devserver.Options
}

func (o *Options) defaults() error {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port <= 0 || o.Port > 65535 {
		return fmt.Errorf("cluster: PostgreSQL port %d out of range", o.Port)
	}
	if o.User == "" {
		o.User = "postgres"
	}
	if o.Database == "" {
		o.Database = "temporal"
	}
	if o.VisibilityDatabase == "" {
		o.VisibilityDatabase = "temporal_visibility"
	}
	if o.Database == o.VisibilityDatabase {
		return fmt.Errorf("cluster: the visibility database must differ from %s", o.Database)
	}
	if o.Server.DBFile != "" || o.Server.Store != nil {
		return errors.New("cluster: Server.DBFile and Server.Store are set by the cluster")
	}
	if o.Server.Namespace == "" {
		o.Server.Namespace = "default"
	}
	return nil
}

// sqlConfig is the plugin configuration of one database.
func (o *Options) sqlConfig(db string) *config.SQL {
	return &config.SQL{
		PluginName:      postgresql.PluginName,
		DatabaseName:    db,
		ConnectAddr:     o.Host + ":" + strconv.Itoa(o.Port),
		ConnectProtocol: "tcp",
		User:            o.User,
		Password:        o.Password,
		MaxConns:        20,
		MaxIdleConns:    20,
	}
}

// Start creates the databases, their schema and the namespace when missing, then starts
// the Temporal server on them and returns once its frontend answers. Starting again on
// the same databases keeps every run.
func Start(o Options) (*devserver.Server, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	store := &devserver.SQLStore{Persistence: o.sqlConfig(o.Database), Visibility: o.sqlConfig(o.VisibilityDatabase)}
	if err := setup(store.Persistence, "postgresql/v12/temporal/schema.sql", pgschema.Version); err != nil {
		return nil, err
	}
	if err := setup(store.Visibility, "postgresql/v12/visibility/schema.sql", pgschema.VisibilityVersion); err != nil {
		return nil, err
	}
	ns, err := devserver.NamespaceConfig(o.Server.Namespace)
	if err != nil {
		return nil, err
	}
	// CreateNamespaces writes through the SQL plugin named in the config: it works for
	// any SQL store, and leaves an existing namespace alone.
	if err := sqlite.CreateNamespaces(store.Persistence, ns); err != nil {
		return nil, fmt.Errorf("cluster: create namespace %s: %w", o.Server.Namespace, err)
	}
	opts := o.Server
	opts.Store = store
	return devserver.Start(opts)
}

// setup creates database cfg.DatabaseName when missing and, when it has no schema
// version yet, the schema of file (one of the server module's embedded schema files)
// and its version.
func setup(cfg *config.SQL, file, version string) error {
	if err := createDatabase(cfg); err != nil {
		return err
	}
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("cluster: connect to database %s: %w", cfg.DatabaseName, err)
	}
	defer func() { _ = db.Close() }()
	if err := db.CreateSchemaVersionTables(); err != nil {
		return fmt.Errorf("cluster: schema version tables of %s: %w", cfg.DatabaseName, err)
	}
	if v, err := db.ReadSchemaVersion(cfg.DatabaseName); err == nil && v != "" {
		if v != version {
			return fmt.Errorf("cluster: database %s has schema version %s; this server needs %s", cfg.DatabaseName, v, version)
		}
		return nil
	}
	text, err := fs.ReadFile(dbschemas.Assets(), file)
	if err != nil {
		return fmt.Errorf("cluster: read schema %s: %w", file, err)
	}
	stmts, err := persistence.LoadAndSplitQueryFromReaders([]io.Reader{bytes.NewReader(text)})
	if err != nil {
		return fmt.Errorf("cluster: parse schema %s: %w", file, err)
	}
	for _, stmt := range stmts {
		if err := db.Exec(stmt); err != nil {
			return fmt.Errorf("cluster: schema %s in %s: %w", file, cfg.DatabaseName, err)
		}
	}
	if err := db.UpdateSchemaVersion(cfg.DatabaseName, version, version); err != nil {
		return fmt.Errorf("cluster: record schema version of %s: %w", cfg.DatabaseName, err)
	}
	if err := db.WriteSchemaUpdateLog("0", version, "", "gateflow cluster setup"); err != nil {
		return fmt.Errorf("cluster: schema update log of %s: %w", cfg.DatabaseName, err)
	}
	return nil
}

// createDatabase creates cfg.DatabaseName through the server's postgres database unless
// it exists.
func createDatabase(cfg *config.SQL) error {
	admin := *cfg
	admin.DatabaseName = "postgres"
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, &admin, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("cluster: connect to PostgreSQL at %s: %w", cfg.ConnectAddr, err)
	}
	defer func() { _ = db.Close() }()
	if err := db.CreateDatabase(cfg.DatabaseName); err != nil && !isDuplicateDatabase(err) {
		return fmt.Errorf("cluster: create database %s: %w", cfg.DatabaseName, err)
	}
	return nil
}

// isDuplicateDatabase reports PostgreSQL's duplicate_database (SQLSTATE 42P04).
func isDuplicateDatabase(err error) bool {
	s := err.Error()
	return strings.Contains(s, "42P04") || strings.Contains(s, "already exists")
}
