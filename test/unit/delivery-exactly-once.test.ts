import { describe, expect, it } from 'vitest';
import { checkExactlyOnce, type TargetFacts } from '../support/delivery-history/exactly-once.js';
import { OpHistory } from '../support/sched/op-history.js';

/** The delivery history checker on histories written by hand: each rule kept, and each broken. */
const WINDOW = ['e1', 'e2', 'e3'];
const DELIVERED: TargetFacts = { rows: WINDOW, windowIds: WINDOW, receipts: 1 };
const NOTHING: TargetFacts = { rows: [], windowIds: WINDOW, receipts: 0 };

/** deliver-window failed (unknown), the automatic reconcile found it published, resume finished it. */
function recovered(): OpHistory {
  const h = new OpHistory();
  const run = h.invoke('start', 'deliver-window', { execution: 'dw-1' });
  const retire = h.invoke('operator-1', 'retire', {});
  retire.fail({ error: 'Delivery.ActionNotPermitted' });
  run.info({ status: 'FAILED', error: 'Delivery.StepRefused' });
  h.invoke('dispatch#0', 'delivery-reconcile', { execution: 'r-1' }).ok({ status: 'SUCCEEDED', state: 'PUBLISHED' });
  h.invoke('settle-1', 'resume', {}).ok({ state: 'CUSTODY_RELEASED' });
  return h;
}

/** deliver-window failed (unknown), the operator retired what it left. */
function retired(): OpHistory {
  const h = new OpHistory();
  h.invoke('start', 'deliver-window', { execution: 'dw-1' }).info({
    status: 'FAILED',
    error: 'Delivery.NeedsRecovery',
  });
  h.invoke('operator-1', 'retire', {}).info({ error: 'Cutpoint.WorkerCrashed' });
  h.invoke('operator-1.2', 'retire', {}).ok({ state: 'RETIRED' });
  return h;
}

describe('checkExactlyOnce', () => {
  it('passes an execution that SUCCEEDED with the window there once and one receipt', () => {
    const h = new OpHistory();
    h.invoke('start', 'deliver-window', { execution: 'dw-1' }).ok({ status: 'SUCCEEDED', state: 'CUSTODY_RELEASED' });
    expect(checkExactlyOnce(h, DELIVERED)).toEqual([]);
  });

  it('passes a recovered delivery, and holds its unknown and refused operations to nothing', () => {
    expect(checkExactlyOnce(recovered(), DELIVERED)).toEqual([]);
  });

  it('passes a retired window with nothing in the target, and a history that acknowledged nothing either way', () => {
    expect(checkExactlyOnce(retired(), NOTHING)).toEqual([]);
    const h = new OpHistory();
    h.invoke('start', 'deliver-window', {}).info({ status: 'FAILED' });
    h.invoke('operator-1', 'reconcile', {}).ok({ state: 'PARTIAL_PROVED' });
    // An unacknowledged window may be there or not: the other checks judge it.
    expect(checkExactlyOnce(h, NOTHING)).toEqual([]);
    expect(checkExactlyOnce(h, DELIVERED)).toEqual([]);
  });

  it('catches a delivery acknowledged without its receipt, or with two', () => {
    expect(checkExactlyOnce(recovered(), { ...DELIVERED, receipts: 0 })).toEqual([
      'delivery-reconcile by dispatch#0 (op 5) acknowledged the window delivered (PUBLISHED), yet the target holds 3 rows (the window has 3) and 0 receipt(s)',
    ]);
    expect(checkExactlyOnce(recovered(), { ...DELIVERED, receipts: 2 })).toEqual([
      expect.stringContaining('and 2 receipt(s)'),
    ]);
  });

  it('catches a delivery acknowledged with rows missing, held twice, or not of the window', () => {
    const h = new OpHistory();
    h.invoke('start', 'deliver-window', {}).ok({ status: 'SUCCEEDED' });
    expect(checkExactlyOnce(h, { ...DELIVERED, rows: ['e1', 'e1', 'e3', 'x9'] })).toEqual([
      "deliver-window by start (op 1) acknowledged the window delivered (SUCCEEDED), yet the target holds 4 rows (the window has 3) and 1 receipt(s): 1 of the window's rows missing [e2], rows held more than once [e1], rows not of the window [x9]",
    ]);
    expect(checkExactlyOnce(h, NOTHING)[0]).toContain("3 of the window's rows missing [e1,e2,e3]");
  });

  it('catches a retirement acknowledged with the rows or a receipt left in the target', () => {
    expect(checkExactlyOnce(retired(), { ...NOTHING, rows: ['e2'] })).toEqual([
      "retire by operator-1.2 (op 5) acknowledged the window retired (RETIRED), yet the target holds 1 of the window's rows and 0 receipt(s)",
    ]);
    expect(checkExactlyOnce(retired(), { ...NOTHING, receipts: 1 })).toEqual([
      expect.stringContaining(
        "acknowledged the window retired (RETIRED), yet the target holds 0 of the window's rows and 1 receipt(s)",
      ),
    ]);
  });

  it('catches acknowledgements that contradict each other, in either order', () => {
    const h = recovered();
    h.invoke('operator-2', 'retire', {}).ok({ state: 'RETIRED' });
    expect(checkExactlyOnce(h, DELIVERED)).toEqual([
      expect.stringContaining('retire by operator-2 (op 9) acknowledged the window retired (RETIRED), yet'),
      'retire by operator-2 (op 9) acknowledged the window retired (RETIRED) after delivery-reconcile by dispatch#0 (op 5) acknowledged the window delivered (PUBLISHED)',
    ]);
    const g = retired();
    g.invoke('dispatch#0', 'delivery-reconcile', {}).ok({ status: 'SUCCEEDED', state: 'SUCCEEDED' });
    expect(checkExactlyOnce(g, NOTHING)).toContain(
      'delivery-reconcile by dispatch#0 (op 7) acknowledged the window delivered (SUCCEEDED) after retire by operator-1.2 (op 5) acknowledged the window retired (RETIRED)',
    );
  });

  it('orders acknowledgements by when they were given, not when they were asked', () => {
    const h = new OpHistory();
    const reconcile = h.invoke('dispatch#0', 'delivery-reconcile', {});
    h.invoke('operator-1', 'retire', {}).ok({ state: 'RETIRED' });
    reconcile.ok({ status: 'SUCCEEDED', state: 'PUBLISHED' });
    expect(checkExactlyOnce(h, NOTHING)).toContain(
      'delivery-reconcile by dispatch#0 (op 3) acknowledged the window delivered (PUBLISHED) after retire by operator-1 (op 2) acknowledged the window retired (RETIRED)',
    );
  });

  it('catches the window held two or more times over, acknowledged or not', () => {
    const twice = { ...NOTHING, rows: [...WINDOW, ...WINDOW], receipts: 1 };
    expect(checkExactlyOnce(new OpHistory(), twice)).toEqual(["the target holds 6 rows, 2 times the window's 3"]);
    expect(checkExactlyOnce(new OpHistory(), { ...twice, rows: [...WINDOW, ...WINDOW, ...WINDOW] })).toEqual([
      "the target holds 9 rows, 3 times the window's 3",
    ]);
    // Once over, or a part of it, is not a multiple: the all-or-nothing check judges those.
    expect(checkExactlyOnce(new OpHistory(), { ...twice, rows: [...WINDOW, 'e1'] })).toEqual([]);
  });
});
