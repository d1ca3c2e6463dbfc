package flowctl

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/blob"
)

func TestPickArtifact(t *testing.T) {
	rows := []artifactRow{
		{Step: "build", StepName: "build", Name: "app", Key: "k1"},
		{Step: "build#2", StepName: "build", Name: "app", Key: "k2"},
		{Step: "build#2", StepName: "build", Name: "log", Key: "k2log"},
	}
	r, err := pickArtifact(rows, "run", "build", "app")
	require.NoError(t, err)
	assert.Equal(t, "k1", r.Key, "the step ID the table shows wins")
	r, err = pickArtifact(rows, "run", "build", "log")
	require.NoError(t, err)
	assert.Equal(t, "k2log", r.Key, "else a name means its latest step with the artifact")
	r, err = pickArtifact(rows, "run", "build#2", "log")
	require.NoError(t, err)
	assert.Equal(t, "k2log", r.Key)

	_, err = pickArtifact(rows, "run", "build", "nope")
	assert.EqualError(t, err, `run run: step build has no artifact "nope": it has app, app, log`)
	assert.Equal(t, ExitNotFound, classify(err))
	_, err = pickArtifact(rows, "run", "deploy", "app")
	assert.EqualError(t, err, `run run: step deploy has no artifact "app": it has none (flowctl artifacts run lists the run's)`)
	assert.Equal(t, ExitNotFound, classify(err))
}

func TestReadArtifactChecksTheStoreAndTheDigest(t *testing.T) {
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	s, err := blob.Open(ctx, u)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "artifacts/w/r/build/1/app", []byte("hello")))
	require.NoError(t, s.Close())

	a := &app{blobURL: u}
	row := artifactRow{Step: "build", Name: "app", Key: "artifacts/w/r/build/1/app", SHA256: sha256Hex([]byte("hello"))}
	data, err := a.readArtifact(ctx, row)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(data))

	bad := row
	bad.SHA256 = sha256Hex([]byte("other"))
	_, err = a.readArtifact(ctx, bad)
	assert.ErrorContains(t, err, "the store's content has SHA-256 "+row.SHA256)

	gone := row
	gone.Key = "artifacts/w/r/build/1/gone"
	_, err = a.readArtifact(ctx, gone)
	assert.True(t, errors.Is(err, blob.ErrNotFound))
	assert.Equal(t, ExitNotFound, classify(err))
}
