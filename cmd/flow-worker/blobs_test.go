package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
)

func TestShellOutputLimit(t *testing.T) {
	for _, tt := range []struct {
		flag  int
		store bool
		want  int
	}{
		{0, false, 0}, // the worker's default: activities.MaxOutputBytes
		{0, true, activities.MaxStoredOutputBytes},
		{1000, false, 1000},
		{activities.MaxOutputBytes, false, activities.MaxOutputBytes},
		{1 << 30, true, 1 << 30},
		{1000, true, 1000},
	} {
		got, err := shellOutputLimit(tt.flag, tt.store)
		require.NoError(t, err, "%d %v", tt.flag, tt.store)
		assert.Equal(t, tt.want, got, "%d %v", tt.flag, tt.store)
	}
	_, err := shellOutputLimit(activities.MaxOutputBytes+1, false)
	assert.ErrorContains(t, err, "--max-shell-output 262145: without a blob store (--blob-url, GATEFLOW_BLOB_URL)")
	_, err = shellOutputLimit(-1, true)
	assert.ErrorContains(t, err, "--max-shell-output -1: want a positive number")
}
