package main

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDevAuthFlags(t *testing.T) {
	_, err := parse([]string{"--auth"}, io.Discard)
	assert.ErrorContains(t, err, "--auth needs --dev")
	_, err = parse([]string{"--dev", "--auth-dev-key", "k.json"}, io.Discard)
	assert.ErrorContains(t, err, "--auth-dev-key needs --auth")

	db := filepath.Join(t.TempDir(), "g.db")
	cfg, err := parse([]string{"--dev", "--auth", "--db-file", db}, io.Discard)
	require.NoError(t, err)
	d, err := cfg.devAuth.setup(cfg.dbFile, "default")
	require.NoError(t, err)
	assert.Equal(t, db+".auth-key.json", d.keyPath)
	assert.True(t, d.created)
	assert.Equal(t, "P-256", d.server.Key.Curve.Params().Name)
	assert.NotEmpty(t, d.worker)
	assert.NotEmpty(t, d.server.Token)
	again, err := cfg.devAuth.setup(cfg.dbFile, "default")
	require.NoError(t, err)
	assert.False(t, again.created, "the key is kept across restarts")
	assert.Equal(t, d.key.ID, again.key.ID)

	var out bytes.Buffer
	d.printBanner(&out, "", "http://127.0.0.1:8233")
	assert.Contains(t, out.String(), "flowctl login NAME --dev-key "+d.keyPath)
	assert.Contains(t, out.String(), "Web UI login: http://127.0.0.1:8233/gateflow/login (it acts as you); a link: flowctl login NAME --dev-key "+
		d.keyPath+" --web http://127.0.0.1:8233\n")
	out.Reset()
	d.printBanner(&out, "", "")
	assert.NotContains(t, out.String(), "Web UI", "no UI, no login line")
	off, err := (&devAuthFlags{}).setup("", "default")
	require.NoError(t, err)
	assert.Nil(t, off)
}
