package flowctl

import (
	"os"
	"strings"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/connect"
)

// hint is a suggested flowctl command with the connection flags this invocation used when
// they are not the defaults (--address, --namespace, --task-queue), so it works as printed.
func (a *app) hint(cmd string) string {
	rest, ok := strings.CutPrefix(cmd, "flowctl ")
	if !ok {
		return cmd
	}
	var flags []string
	if a.address != "" && a.address != connect.DefaultAddress && os.Getenv("TEMPORAL_ADDRESS") != a.address {
		flags = append(flags, "--address "+a.address)
	}
	if a.namespace != "" && a.namespace != connect.DefaultNamespace && os.Getenv("TEMPORAL_NAMESPACE") != a.namespace {
		flags = append(flags, "--namespace "+a.namespace)
	}
	if a.taskQueue != "" && a.taskQueue != core.DefaultTaskQueue && os.Getenv("TEMPORAL_TASK_QUEUE") != a.taskQueue {
		flags = append(flags, "--task-queue "+a.taskQueue)
	}
	if len(flags) == 0 {
		return cmd
	}
	return "flowctl " + strings.Join(flags, " ") + " " + rest
}
