package activities_test

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
)

func ExampleRunShell() {
	res, err := activities.RunShell(context.Background(), activities.Shell{Command: "echo hi"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(res.Stdout)
	fmt.Println("exit code", res.ExitCode)
	// Output:
	// hi
	// exit code 0
}

func ExampleRunShell_failure() {
	_, err := activities.RunShell(context.Background(), activities.Shell{Command: "echo no such file >&2; exit 2"})
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ShellExitErrorType {
		var f activities.ShellFailure
		_ = app.Details(&f)
		fmt.Println(app.Message())
		fmt.Println("exit code", f.ExitCode)
	}
	// Output:
	// exit code 2: no such file
	// exit code 2
}

func ExampleShell_Validate() {
	fmt.Println(activities.Shell{Command: "make test"}.Validate())
	fmt.Println(activities.Shell{Command: "  "}.Validate())
	// Output:
	// <nil>
	// shell: command is empty
}

func ExampleTail() {
	fmt.Println(activities.Tail("compiling\nlinking\nerror: undefined symbol\n", 24))
	// Output:
	// …error: undefined symbol
}
