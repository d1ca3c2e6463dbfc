package flow

import (
	"testing"

	"github.com/gateflow/gateflow/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartDefaultsAtDefine(t *testing.T) {
	f := Define("train", someHandler, StartDefaults(core.StartOptions{Priority: 2,
		Labels: map[string]string{"team": "ml"}, WorkerTags: []string{"gpu", "eu"}}))
	require.NoError(t, f.Err())
	info := f.Info()
	assert.Equal(t, 2, info.Priority)
	assert.Equal(t, map[string]string{"team": "ml"}, info.Labels)
	assert.Equal(t, []string{"eu", "gpu"}, info.WorkerTags, "sorted")

	tests := []struct {
		name    string
		opts    core.StartOptions
		wantErr string
	}{
		{"priority", core.StartOptions{Priority: 6}, "define train: start defaults: priority 6: want 1 (highest) to 5 (lowest)"},
		{"label key", core.StartOptions{Labels: map[string]string{"Team": "ml"}}, `define train: start defaults: label "Team": keys are 1-63 lower-case letters`},
		{"label value", core.StartOptions{Labels: map[string]string{"team": "a\nb"}}, "define train: start defaults: label team: the value is longer than 200 characters or has a line break"},
		{"tag", core.StartOptions{WorkerTags: []string{"GPU"}}, `define train: start defaults: tag "GPU": want 1-63 lower-case letters`},
		{"tag twice", core.StartOptions{WorkerTags: []string{"gpu", "gpu"}}, "define train: start defaults: tag gpu given twice"},
		{"too many tags", core.StartOptions{WorkerTags: []string{"a", "b", "c", "d", "e"}}, "define train: start defaults: 5 worker tags: a worker has at most 4"},
		{"other fields", core.StartOptions{Priority: 1, MaxAttempts: 2}, "define train: start defaults: only Priority, Labels and WorkerTags can be given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Define("train", someHandler, StartDefaults(tt.opts)).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
