package flowclient

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMaxRunsErrorNamesTheKey(t *testing.T) {
	e := &MaxRunsError{Workflow: "keyed", Max: 1, Live: []string{"r1"}, Key: "web"}
	assert.Equal(t, `start keyed: the flow allows at most 1 live runs per concurrency key (max runs, on overflow refuse) and key "web" has 1: r1`, e.Error())
}

func TestMaxRunsErrorMessage(t *testing.T) {
	err := error(&MaxRunsError{Workflow: "deploy", Max: 1, Live: []string{"deploy-1"}})
	assert.EqualError(t, err, "start deploy: the flow allows at most 1 live runs (max runs, on overflow refuse) and has 1: deploy-1")
}
