package devauth

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ErrTokenInvalid is wrapped by every error of Verify: the token is not one the dev key
// signed for someone, or it is not valid now.
var ErrTokenInvalid = errors.New("invalid dev token")

// maxTokenLen bounds what Verify parses; Mint's tokens are well under 2 KB.
const maxTokenLen = 8 << 10

// Verified is what Verify read from a valid token.
type Verified struct {
	// Subject is the person or worker the token names.
	Subject string
	// Expires is when the token stops being valid.
	Expires time.Time
}

// Verify checks token the way the embedded server's claim mapper does — an ES256 JWT whose
// "kid" is kid, signed by pub, valid at now, naming a subject CheckSubject accepts — and
// returns its subject and expiry. A leading "Bearer " is allowed.
func Verify(pub *ecdsa.PublicKey, kid, token string, now time.Time) (Verified, error) {
	token = BearerToken(token)
	switch {
	case token == "":
		return Verified{}, fmt.Errorf("%w: the token is empty", ErrTokenInvalid)
	case len(token) > maxTokenLen:
		return Verified{}, fmt.Errorf("%w: the token is %d bytes long, the limit is %d", ErrTokenInvalid, len(token), maxTokenLen)
	}
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return Verified{}, fmt.Errorf("%w: not an ES256 JWT: %v", ErrTokenInvalid, err)
	}
	if len(parsed.Headers) != 1 || parsed.Headers[0].KeyID != kid {
		return Verified{}, fmt.Errorf("%w: it is not signed with this server's dev key %s", ErrTokenInvalid, kid)
	}
	var claims jwt.Claims
	if err := parsed.Claims(pub, &claims); err != nil {
		return Verified{}, fmt.Errorf("%w: bad signature: %v", ErrTokenInvalid, err)
	}
	if claims.Expiry == nil {
		return Verified{}, fmt.Errorf("%w: the token has no expiry", ErrTokenInvalid)
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Time: now}, 0); err != nil {
		return Verified{}, fmt.Errorf("%w: %v", ErrTokenInvalid, err)
	}
	if err := CheckSubject(claims.Subject); err != nil {
		return Verified{}, fmt.Errorf("%w: subject: %v", ErrTokenInvalid, err)
	}
	return Verified{Subject: claims.Subject, Expires: claims.Expiry.Time()}, nil
}

// BearerToken is token without surrounding spaces and a leading "Bearer ".
func BearerToken(token string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer "))
}
