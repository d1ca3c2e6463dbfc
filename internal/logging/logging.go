// Package logging builds the Temporal SDK loggers of gateflow's binaries: structured text
// logs through log/slog at a chosen level.
package logging

import (
	"io"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/log"
)

// NewSDKLogger returns a Temporal SDK logger writing text lines to w at level ("debug",
// "info", "warn", "error"; "off" or "none" for nothing). Unknown levels mean "warn".
func NewSDKLogger(w io.Writer, level string) log.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "off", "none":
		w, l = io.Discard, slog.LevelError+4
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelWarn
	}
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})))
}
