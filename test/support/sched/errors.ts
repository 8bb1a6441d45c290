/**
 * The scheduler's own failures, each with a stable `name`: a schedule that broke a flow's
 * invariant, and one that could not run to its end (a stall or a livelock, itself a finding).
 */

export class InvariantViolation extends Error {
  override name = 'Sched.InvariantViolation';
}

export class ScheduleStall extends Error {
  override name = 'Sched.Stall';
}
