package devauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Login is what `flowctl login` keeps: a dev token for one server address.
type Login struct {
	// Address is the frontend the token is for; flowctl sends it to that address only.
	Address string `json:"address"`
	// Subject is the name the token carries.
	Subject string `json:"subject"`
	// Token is the bearer JWT.
	Token string `json:"token"`
	// Expires is when the token stops being valid.
	Expires time.Time `json:"expires"`
}

// LoginPath is the file of the dev login: GATEFLOW_DEV_LOGIN when set, else
// gateflow/dev-login.json under the user's config directory.
func LoginPath() (string, error) {
	if p := os.Getenv("GATEFLOW_DEV_LOGIN"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("dev login: no config directory: %w", err)
	}
	return filepath.Join(dir, "gateflow", "dev-login.json"), nil
}

// SaveLogin writes l to LoginPath (mode 0600), replacing the previous login.
func SaveLogin(l Login) (string, error) {
	p, err := LoginPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("dev login: %w", err)
	}
	raw, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return "", fmt.Errorf("dev login: %w", err)
	}
	if err := os.WriteFile(p, append(raw, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("dev login: write %s: %w", p, err)
	}
	return p, nil
}

// LoadLogin is the saved login for address, or nil when there is none for it (no file,
// another address, or an expired token).
func LoadLogin(address string, now time.Time) (*Login, error) {
	p, err := LoginPath()
	if err != nil {
		return nil, nil
	}
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dev login %s: %w", p, err)
	}
	var l Login
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("dev login %s: %w", p, err)
	}
	if l.Address != address || l.Token == "" || (!l.Expires.IsZero() && now.After(l.Expires)) {
		return nil, nil
	}
	return &l, nil
}

// LoginSubject is the name of the saved login whatever its address, or "" when there is
// none (or it expired).
func LoginSubject(now time.Time) string {
	p, err := LoginPath()
	if err != nil {
		return ""
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	var l Login
	if json.Unmarshal(raw, &l) != nil || (!l.Expires.IsZero() && now.After(l.Expires)) {
		return ""
	}
	return l.Subject
}
