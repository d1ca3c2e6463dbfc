package devserver

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// RunsURL is the Web UI's workflow list of namespace filtered to gateflow runs
// (RunsListURL on the server's UI), or "" when the server runs without a UI.
func (s *Server) RunsURL(namespace string) string {
	if s.uiAddress == "" {
		return ""
	}
	return RunsListURL(s.UIURL(), namespace)
}

// RunsListURL is the workflow list of namespace in the Web UI at base, filtered by
// searchattr.RunsQuery (in the UI's query parameter): runs only, no entity workflows or plans.
func RunsListURL(base, namespace string) string {
	q := strings.ReplaceAll(url.QueryEscape(searchattr.RunsQuery), "+", "%20")
	return fmt.Sprintf("%s/namespaces/%s/workflows?query=%s", base, url.PathEscape(namespace), q)
}

// uiServer is the Temporal Web UI served from the assets embedded in the ui-server module.
type uiServer struct {
	srv  *uiserver.Server
	done chan struct{}
}

// startUI serves the Web UI on address and returns once it answers HTTP.
//
// ui-server's Start blocks and exits the process when it cannot listen, so the port was
// checked before the server started; the UI is started last, right after that check.
//
// token, when set, is the bearer token the UI's calls to the frontend carry.
func startUI(address, frontend, namespace, codecEndpoint, token string) (*uiServer, error) {
	h, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("devserver: UI address %s: %w", address, err)
	}
	var port int
	if _, err := fmt.Sscan(p, &port); err != nil {
		return nil, fmt.Errorf("devserver: UI port %s: %w", p, err)
	}
	if err := checkFree(port); err != nil {
		return nil, fmt.Errorf("devserver: UI port: %w", err)
	}
	cfg := &uiconfig.Config{
		Host:                h,
		Port:                port,
		TemporalGRPCAddress: frontend,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		HideLogs:            true,
		DisableNewsFetch:    true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		RefreshInterval:     0,
		Codec:               uiconfig.Codec{Endpoint: codecEndpoint},
	}
	opts := []uioptions.ServerOption{uioptions.WithConfigProvider(cfg)}
	if token != "" {
		opts = append(opts, uiBearer(token))
	}
	u := &uiServer{srv: uiserver.NewServer(opts...), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		_ = u.srv.Start()
	}()
	deadline := time.Now().Add(10 * time.Second)
	cl := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		resp, err := cl.Get("http://" + address + "/healthz")
		if err == nil {
			resp.Body.Close()
			return u, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	u.stop()
	return nil, fmt.Errorf("devserver: web UI on %s did not answer", address)
}

func (u *uiServer) stop() {
	u.srv.Stop()
	<-u.done
}

// codecServer serves a payload codec to the UI (a Temporal codec server).
type codecServer struct {
	srv *http.Server
	url string
}

// startCodec serves codec on a free loopback port, allowing the UI on uiPort (as
// 127.0.0.1 or localhost) to call it.
func startCodec(codec converter.PayloadCodec, uiPort int) (*codecServer, error) {
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		return nil, fmt.Errorf("devserver: codec server: %w", err)
	}
	c := &codecServer{
		srv: &http.Server{Handler: blob.HTTPHandler(codec, fmt.Sprintf("http://%s:%d", host, uiPort), fmt.Sprintf("http://localhost:%d", uiPort)), ReadHeaderTimeout: 5 * time.Second},
		url: "http://" + l.Addr().String(),
	}
	go func() { _ = c.srv.Serve(l) }()
	return c, nil
}

func (c *codecServer) stop() {
	if c != nil {
		_ = c.srv.Close()
	}
}
