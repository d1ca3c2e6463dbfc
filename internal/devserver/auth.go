package devserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/labstack/echo/v4"
	uiapi "github.com/temporalio/ui-server/v2/server/api"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	"google.golang.org/grpc/metadata"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"

	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/uigate"
)

// Auth turns on verified callers: the frontend maps each caller's bearer JWT to claims with
// Temporal's default JWT claim mapper (verifying it against Key), Authorizer decides, and
// every history event carries the verified principal (frontend.enablePrincipalPropagation).
// The server's own services reach the history through an internal frontend that needs no
// token. The Web UI requires a login with a token of Key (see package uigate) and calls the
// frontend with that person's token; it has no token of its own.
type Auth struct {
	// Key verifies tokens (ES256); KeyID is the "kid" they must name.
	Key   *ecdsa.PublicKey
	KeyID string
	// Token is a bearer token with the system admin role the server uses to check itself
	// when it starts (namespace and search attributes).
	Token string
}

func (a *Auth) check() error {
	switch {
	case a.Key == nil:
		return fmt.Errorf("devserver: auth needs a public key")
	case a.KeyID == "":
		return fmt.Errorf("devserver: auth needs a key ID")
	case a.Token == "":
		return fmt.Errorf("devserver: auth needs an admin token for the server's own checks")
	}
	return nil
}

// claimMapper is Temporal's default JWT claim mapper over a's key. The server may call it
// before it has its config, so it reads conf, the config it is given.
func (a *Auth) claimMapper(conf *config.Config, logger log.Logger) func(*config.Config) authorization.ClaimMapper {
	return func(*config.Config) authorization.ClaimMapper {
		return authorization.NewDefaultJWTClaimMapper(keyProvider{key: a.Key, kid: a.KeyID}, &conf.Global.Authorization, logger)
	}
}

// keyProvider serves one ECDSA key to the claim mapper.
type keyProvider struct {
	key *ecdsa.PublicKey
	kid string
}

var _ authorization.TokenKeyProvider = keyProvider{}

func (p keyProvider) EcdsaKey(alg, kid string) (*ecdsa.PublicKey, error) {
	if kid != p.kid {
		return nil, serviceerror.NewPermissionDenied(fmt.Sprintf("unknown token key %q", kid), "")
	}
	return p.key, nil
}

func (p keyProvider) HmacKey(alg, kid string) ([]byte, error) {
	return nil, serviceerror.NewPermissionDenied("HMAC tokens are not accepted", "")
}

func (p keyProvider) RsaKey(alg, kid string) (*rsa.PublicKey, error) {
	return nil, serviceerror.NewPermissionDenied("RSA tokens are not accepted", "")
}

func (p keyProvider) SupportedMethods() []string { return []string{"ES256"} }

func (p keyProvider) Close() {}

// apply adds to the server's options what a needs: the claim mapper and Authorizer, an
// internal frontend (on a free port) for the server's own services, and principal
// propagation. It returns the options and the services to run.
func (a *Auth) apply(conf *config.Config, hosts map[primitives.ServiceName]static.Hosts, dc dynamicconfig.StaticClient,
	opts []temporal.ServerOption, logger log.Logger) ([]temporal.ServerOption, []string, error) {
	if err := a.check(); err != nil {
		return nil, nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	conf.Services[string(primitives.InternalFrontendService)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
	hosts[primitives.InternalFrontendService] = static.SingleLocalHost(fmt.Sprintf("%s:%d", host, port))
	// The server's own clients (schedules, batch operations, ...) find the internal
	// frontend through membership; the public one would refuse them without a token.
	conf.PublicClient.HostPort = ""
	dc[dynamicconfig.EnablePrincipalPropagation.Key()] = true
	opts = append(opts,
		temporal.WithClaimMapper(a.claimMapper(conf, logger)),
		temporal.WithAuthorizer(Authorizer{}),
	)
	return opts, append(append([]string(nil), temporal.DefaultServices...), string(primitives.InternalFrontendService)), nil
}

// verifyToken checks a token the Web UI's login gate is given the way the frontend's
// claim mapper will: signed by a's key, naming its key ID, valid now.
func (a *Auth) verifyToken(token string, now time.Time) (devauth.Verified, error) {
	return devauth.Verify(a.Key, a.KeyID, token, now)
}

// uiForwardToken makes each call the Web UI makes to the frontend carry the token the login
// gate put in uigate.TokenHeader (the logged-in person's), and no token when there is none.
func uiForwardToken() uioptions.ServerOption {
	return uioptions.WithAPIMiddleware([]uiapi.Middleware{func(c echo.Context) runtime.ServeMuxOption {
		tok := c.Request().Header.Get(uigate.TokenHeader)
		return runtime.WithMetadata(func(context.Context, *http.Request) metadata.MD {
			if tok == "" {
				return nil
			}
			return metadata.Pairs("authorization", "Bearer "+tok)
		})
	}})
}
