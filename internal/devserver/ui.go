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
	"github.com/gateflow/gateflow/internal/uigate"
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

// startUI starts the Web UI on s.uiAddress with the codec of s's options, if any: on a
// port of its own, or under Auth behind the UI's login on the UI's port.
func (s *Server) startUI() error {
	opts := s.opts
	var codec http.Handler
	if opts.Codec != nil && opts.Auth != nil {
		s.codecURL = s.UIURL() + uigate.CodecPath
		codec = blob.HTTPHandler(opts.Codec) // same origin as the UI: no CORS
	} else if opts.Codec != nil {
		c, err := startCodec(opts.Codec, opts.UIPort)
		if err != nil {
			return err
		}
		s.codec, s.codecURL = c, c.url
	}
	ui, err := startUI(s.uiAddress, s.frontend, opts.Namespace, s.codecURL, opts.Auth, codec)
	if err != nil {
		s.codec.stop()
		return err
	}
	s.ui = ui
	return nil
}

// uiServer is the Temporal Web UI served from the assets embedded in the ui-server module,
// behind the login gate of package uigate under Auth.
type uiServer struct {
	srv  *uiserver.Server
	done chan struct{}
	// gate serves the UI's port under Auth (the ui-server then listens on a private
	// loopback port); nil without Auth.
	gate *http.Server
}

// startUI serves the Web UI on address and returns once it answers HTTP. With auth, the
// address is served by the login gate and the ui-server listens on a free loopback port
// behind it, its calls to the frontend carrying the logged-in person's token.
//
// ui-server's Start blocks and exits the process when it cannot listen, so the port was
// checked before the server started; the UI is started last, right after that check.
//
// codec, under auth, is served by the gate at uigate.CodecPath.
func startUI(address, frontend, namespace, codecEndpoint string, auth *Auth, codec http.Handler) (*uiServer, error) {
	h, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("devserver: UI address %s: %w", address, err)
	}
	var port int
	if _, err := fmt.Sscan(p, &port); err != nil {
		return nil, fmt.Errorf("devserver: UI port %s: %w", p, err)
	}
	var front net.Listener
	if auth != nil {
		// The gate holds the public port from now on; the ui-server gets a private one.
		if front, err = net.Listen("tcp", address); err != nil {
			return nil, fmt.Errorf("devserver: UI port %d is in use", port)
		}
		if port, err = FreePort(); err != nil {
			front.Close()
			return nil, err
		}
		h = host
	} else if err := checkFree(port); err != nil {
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
	if auth != nil {
		opts = append(opts, uiForwardToken())
	}
	u := &uiServer{srv: uiserver.NewServer(opts...), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		_ = u.srv.Start()
	}()
	inner := net.JoinHostPort(h, fmt.Sprint(port))
	if err := waitHealthy(inner); err != nil {
		if front != nil {
			front.Close()
		}
		u.stop()
		return nil, fmt.Errorf("devserver: web UI on %s did not answer", address)
	}
	if auth != nil {
		gate := uigate.New(inner, auth.verifyToken)
		if codec != nil {
			gate.Mount(uigate.CodecPath, codec)
		}
		u.gate = &http.Server{Handler: gate, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = u.gate.Serve(front) }()
	}
	return u, nil
}

// waitHealthy waits up to 10 s for the ui-server at address to answer its health check.
func waitHealthy(address string) error {
	deadline := time.Now().Add(10 * time.Second)
	cl := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		resp, err := cl.Get("http://" + address + "/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("devserver: %s did not answer", address)
}

func (u *uiServer) stop() {
	if u.gate != nil {
		_ = u.gate.Close()
	}
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
