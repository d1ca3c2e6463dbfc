package devserver

// quietSDKLogger silences the SDK client used for readiness checks.
type quietSDKLogger struct{}

func (quietSDKLogger) Debug(string, ...interface{}) {}
func (quietSDKLogger) Info(string, ...interface{})  {}
func (quietSDKLogger) Warn(string, ...interface{})  {}
func (quietSDKLogger) Error(string, ...interface{}) {}
