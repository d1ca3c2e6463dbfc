// Package uigate is the login gate of the Web UI of `flow-worker --dev --auth`
// (internal/devserver serves it on the UI's port, in front of the ui-server).
//
// A browser logs in at LoginPath by pasting a DEV ONLY token (or by opening the link
// `flowctl login NAME --web URL` prints, whose fragment carries the token); the gate
// verifies it and keeps an opaque session (SessionCookie: HttpOnly, SameSite=Strict,
// expiring with the token). Each request of a logged-in browser is forwarded to the
// ui-server with that person's token in TokenHeader, and with every credential the browser
// sent itself removed (Authorization, Authorization-Extras, Grpc-Metadata-*, TokenHeader,
// the session cookie); the ui-server's calls to the frontend carry that token, so the UI
// acts as the person who logged in and the server's rules apply to that person. Without a
// session, a page load is redirected to the login page and anything else gets 401; only the
// health check is forwarded, without a token. The ui-server's own CSRF check stays.
//
// It owns the sessions and the login page, and nothing of Temporal: the frontend verifies
// the forwarded token again on every call.
package uigate
