package flowctl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func plainHint(s string) string { return s }

func TestHintCarriesTheConnectionFlagsInUse(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("TEMPORAL_NAMESPACE", "")
	t.Setenv("TEMPORAL_TASK_QUEUE", "")
	a := &app{address: "localhost:7233", namespace: "default", taskQueue: "gateflow"}
	assert.Equal(t, "flowctl approve r ship", a.hint("flowctl approve r ship"), "defaults need no flags")
	a = &app{address: "127.0.0.1:17233", namespace: "prod", taskQueue: "mine"}
	assert.Equal(t, "flowctl --address 127.0.0.1:17233 --namespace prod --task-queue mine approve r ship", a.hint("flowctl approve r ship"))
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:17233")
	assert.Equal(t, "flowctl --namespace prod --task-queue mine approve r ship", a.hint("flowctl approve r ship"),
		"what the environment sets carries over by itself")
}
