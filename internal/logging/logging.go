// Package logging builds the loggers of gateflow's binaries: structured zap logs (console
// or JSON) behind the Temporal SDK's log.Logger, so the worker's own logs and the
// workflows' (replay-safe through workflow.GetLogger) come out the same way.
package logging

import (
	"io"
	"os"
	"strings"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewSDKLogger returns a Temporal SDK logger writing console lines to w at level ("debug",
// "info", "warn", "error"; "off" or "none" for nothing). Unknown levels mean "warn". A nil
// w means stderr.
func NewSDKLogger(w io.Writer, level string) log.Logger {
	return New(w, level, "console")
}

// New returns a Temporal SDK logger on zap: format "json" writes one JSON object per line,
// anything else readable console lines.
func New(w io.Writer, level, format string) log.Logger {
	if w == nil {
		w = os.Stderr
	}
	var lvl zapcore.Level
	switch strings.ToLower(level) {
	case "off", "none":
		return zapLogger{zap.NewNop().Sugar()}
	case "debug":
		lvl = zapcore.DebugLevel
	case "info":
		lvl = zapcore.InfoLevel
	case "error":
		lvl = zapcore.ErrorLevel
	default:
		lvl = zapcore.WarnLevel
	}
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if format == "json" {
		enc = zapcore.NewJSONEncoder(cfg)
	} else {
		cfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(cfg)
	}
	core := zapcore.NewCore(enc, zapcore.AddSync(w), lvl)
	return zapLogger{zap.New(core).Sugar()}
}

// zapLogger adapts a zap logger to the SDK's key-value logger.
type zapLogger struct{ s *zap.SugaredLogger }

func (l zapLogger) Debug(msg string, kv ...any) { l.s.Debugw(msg, kv...) }
func (l zapLogger) Info(msg string, kv ...any)  { l.s.Infow(msg, kv...) }
func (l zapLogger) Warn(msg string, kv ...any)  { l.s.Warnw(msg, kv...) }
func (l zapLogger) Error(msg string, kv ...any) { l.s.Errorw(msg, kv...) }

// With returns a logger that adds kv to every line (log.WithLogger).
func (l zapLogger) With(kv ...any) log.Logger { return zapLogger{l.s.With(kv...)} }
