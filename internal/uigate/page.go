package uigate

import (
	"html/template"
	"net/http"
)

// loginPage is what the login page shows.
type loginPage struct {
	// Subject is who the browser is logged in as, "" when it is not.
	Subject string
	// Next is where a login sends the browser.
	Next string
	// Base is the Web UI's URL, for the command that prints a login link.
	Base string
	// Error is why the last login was refused.
	Error string
}

// loginTemplate is the gate's only page. Its script reads a token from the URL's fragment
// (the link `flowctl login --web` prints; a fragment is never sent to a server), removes it
// from the address bar and history, and posts it as the form does.
var loginTemplate = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gateflow Web UI login</title>
<style>body{font-family:sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem}textarea{width:100%;height:8rem;font-family:monospace}
code{background:#eee;padding:0 .2rem}.error{color:#a00;font-weight:bold}</style></head>
<body><h1>gateflow Web UI login</h1>
{{if .Subject}}<p id="logged-in">Logged in as <b>{{.Subject}}</b>. <a href="{{.Next}}">Open the Web UI</a></p>
<form method="post" action="/gateflow/logout"><button id="logout" type="submit">Log out</button></form><hr>{{end}}
<p>This dev server (<code>flow-worker --dev --auth</code>) needs a login: the Web UI acts as the person whose
DEV ONLY token you paste here, and the server's rules apply to that person (you decide only as yourself).</p>
<p>Get a token with <code>flowctl login NAME --dev-key KEY --web {{.Base}}</code> (it prints a link that logs
this browser in) or <code>flowctl login NAME --dev-key KEY --export</code> (the token is TEMPORAL_API_KEY);
the worker's banner names KEY.</p>
{{if .Error}}<p class="error" id="login-error">Login refused: {{.Error}}</p>{{end}}
<form id="login-form" method="post" action="/gateflow/login">
<input type="hidden" name="next" value="{{.Next}}">
<label for="token">Token</label><br><textarea id="token" name="token" autocomplete="off" spellcheck="false"></textarea><br>
<button id="login" type="submit">Log in</button></form>
<script>(() => {
  const h = location.hash;
  if (!h.startsWith('#token=')) { return; }
  history.replaceState(null, '', location.pathname + location.search);
  document.getElementById('token').value = decodeURIComponent(h.slice(7));
  document.getElementById('login-form').submit();
})();</script>
</body></html>
`))

// writeLoginPage answers with the login page.
func writeLoginPage(w http.ResponseWriter, status int, p loginPage) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // "no-referrer" makes the form's Origin "null"
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, p)
}
