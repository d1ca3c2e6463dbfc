package activities_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
)

func ExampleRunHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"healthy"}`)
	}))
	defer srv.Close()

	res, err := activities.RunHTTP(context.Background(), activities.HTTP{URL: srv.URL + "/health"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Status, string(res.JSON))
	// Output:
	// 200 {"status":"healthy"}
}

func ExampleRunHTTP_failure() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such release", http.StatusNotFound)
	}))
	defer srv.Close()

	_, err := activities.RunHTTP(context.Background(), activities.HTTP{URL: srv.URL + "/releases/v9"})
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.HTTPStatusErrorType {
		var f activities.HTTPFailure
		_ = app.Details(&f)
		fmt.Println(strings.Replace(app.Message(), srv.URL, "http://server", 1))
		fmt.Println("status", f.Status, "retryable", !app.NonRetryable())
	}
	// Output:
	// GET http://server/releases/v9: status 404 Not Found: no such release
	// status 404 retryable false
}

func ExampleSecret() {
	_ = os.Setenv("EXAMPLE_API_TOKEN", "t0k3n") // normally set in the worker's environment
	defer os.Unsetenv("EXAMPLE_API_TOKEN")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0k3n" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()

	step := activities.HTTP{URL: srv.URL, Headers: map[string]string{
		"Authorization": "Bearer " + activities.Secret("EXAMPLE_API_TOKEN"),
	}}
	fmt.Println(step.Headers["Authorization"]) // what the step input (and history) holds
	res, err := activities.RunHTTP(context.Background(), step)
	fmt.Println(res.Status, err)
	// Output:
	// Bearer ${secret:EXAMPLE_API_TOKEN}
	// 200 <nil>
}

func ExampleRedactHeaders() {
	fmt.Println(activities.RedactHeaders(map[string]string{
		"Accept":        "application/json",
		"Authorization": "Bearer " + activities.Secret("API_TOKEN"),
		"X-Api-Key":     "literal-key-123",
	}))
	// Output:
	// map[Accept:application/json Authorization:Bearer ${secret:API_TOKEN} X-Api-Key:[redacted]]
}
