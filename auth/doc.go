/*
Package auth makes gateflow's decisions unforgeable: a vote, an answer, a budget raise, a
cancel or a pause carries proof of who made it, and the run checks that proof before the
decision enters its history.

Temporal's own identity on an Update or Signal is a free string the client chose, and a
`by` field in the payload is whatever the sender typed. Package auth gives two kinds of
proof a worker can check on any cluster, without server plugins:

  - A signed decision. Each person has an Ed25519 Key (NewKey, SaveKey, LoadKey); the
    worker knows the public halves in a Directory (LoadDirectory). Sign binds the Decision
    (namespace, workflow ID and first run ID, gate or input, kind, the payload's hash, who)
    with an issue time, a short expiry and a nonce into a compact JWS; Directory.Verify
    refuses it for any other run — a new run that reuses the workflow ID too — gate, kind
    or payload, after it expires, or when the key is not the claimed person's.
  - A token of the organisation's identity provider (OIDC). Issuer.Verify checks its
    signature against the provider's JWKS (LoadJWKS, FetchJWKS), its issuer, audience and
    validity, and that its subject is the claimed person.

Every refusal is a *RefusedError whose Reason callers branch on (IsRefused); errors never
echo the token. Verified is what a passing check proves, for the run to record next to
the decision.

Verification is pure and takes its clock from VerifyOptions.Now, so workflow code can
verify inside an Update validator with workflow.Now and a replay reaches the same verdict:
runs pin the directory they verify with, and a later key rotation does not change past
verdicts.
*/
package auth
