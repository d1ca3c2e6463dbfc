// Package artifacts holds what a running or finished step leaves for others to read, as
// plain data without Temporal: the files a shell step produced (Artifact, kept in
// runs.Step.Artifacts) and the live output a running step heartbeats (LiveOutput, read
// back in runs.Description.Live). Package activities makes them; packages runs, flow,
// flowclient and flowctl read them.
package artifacts
