// Package schedule holds the options of a flow's schedules (flow.Schedule): each one
// becomes a Temporal Schedule the worker creates or updates when it starts, named by its
// position among the flow's schedules or by its ID.
//
//	var Nightly = flow.Define("nightly", nightly,
//		flow.Schedule("0 2 * * *", schedule.ID("nightly"), schedule.Overlap(schedule.OverlapSkip)),
//		flow.Schedule("@every 10m", schedule.Input(Probe{Quick: true}), schedule.Paused()))
//
// flowctl schedules lists them and triggers, pauses or unpauses one
// (flowclient.Client.Schedules, ControlSchedule).
package schedule
