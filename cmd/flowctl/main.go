// Command flowctl operates gateflow runs on Temporal: list the workflows workers serve,
// start runs, list and show them. See `flowctl --help` for the commands and exit codes.
package main

import (
	"os"

	"github.com/gateflow/gateflow/internal/flowctl"
)

func main() {
	os.Exit(flowctl.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
