package devserver

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/config"
)

func TestStartRefusesABadExternalStore(t *testing.T) {
	sql := &config.SQL{PluginName: "postgres12", DatabaseName: "temporal"}
	_, err := Start(Options{DBFile: "x.db", Store: &SQLStore{Persistence: sql, Visibility: sql}})
	require.EqualError(t, err, "devserver: a DBFile and an external Store exclude each other")
	_, err = Start(Options{Store: &SQLStore{Persistence: sql}})
	require.EqualError(t, err, "devserver: an external Store needs its Persistence and Visibility databases")
}

func TestServerConfigGivesAnExternalStoreItsVisibilityDatabase(t *testing.T) {
	one := &config.SQL{DatabaseName: "gateflow.db"}
	c := serverConfig(&SQLStore{Persistence: one, Visibility: one}, portSet{1, 2, 3, 4})
	require.Equal(t, c.Persistence.DefaultStore, c.Persistence.VisibilityStore, "SQLite: one store")
	require.Len(t, c.Persistence.DataStores, 1)

	vis := &config.SQL{DatabaseName: "temporal_visibility"}
	c = serverConfig(&SQLStore{Persistence: one, Visibility: vis}, portSet{1, 2, 3, 4})
	require.NotEqual(t, c.Persistence.DefaultStore, c.Persistence.VisibilityStore)
	require.Same(t, one, c.Persistence.DataStores[c.Persistence.DefaultStore].SQL)
	require.Same(t, vis, c.Persistence.DataStores[c.Persistence.VisibilityStore].SQL)
}
