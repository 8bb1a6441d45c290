import { describe, expect, it } from 'vitest';
import { functionsToArm, type ArmableFunction } from '../../src/gameday/arm-targets.js';
import { LOCAL_CUT_POINTS } from '../../src/local/cut-points.js';
import { FLOWS, STEPS } from '../../src/registry/index.js';
import { flowCutPoints } from '../../src/registry/flow-cut-points.js';
import { everyCutPoint } from '../../src/registry/step-entry.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { stepNameOf } from '../../src/telemetry/step-name.js';

/** One deployed function per registry step, named after it, and one that runs no registry step. */
const FUNCTIONS: ArmableFunction[] = [
  ...STEPS.map((s) => ({ name: `fn-${stepNameOf(s.placeholder)}`, step: stepNameOf(s.placeholder) })),
  { name: 'fn-other' },
];

describe('functionsToArm: a drill arms only the functions whose step crosses its cut points', () => {
  it('selects the steps that cross the cut point, and the function that runs no registry step', () => {
    const names = functionsToArm(`${STREAM_CUT_POINTS.gen0}:fail*`, FUNCTIONS);
    const crossing = STEPS.filter((s) => everyCutPoint(s.cutPoints).includes(STREAM_CUT_POINTS.gen0)).map(
      (s) => `fn-${stepNameOf(s.placeholder)}`,
    );
    expect(crossing.length).toBeGreaterThan(0);
    expect(names.sort()).toEqual([...crossing, 'fn-other'].sort());
    expect(names.length).toBeLessThan(FUNCTIONS.length / 4);
  });

  it('takes every rule of a spec: a drill with its shaping rule arms the steps of both', () => {
    const one = functionsToArm(`${STREAM_CUT_POINTS.gen0}:fail*`, FUNCTIONS);
    const two = functionsToArm(`${STREAM_CUT_POINTS.gen0}:fail*,${STREAM_CUT_POINTS.headCas}:delay=10`, FUNCTIONS);
    expect(two).toEqual(expect.arrayContaining(one));
    expect(two.length).toBeGreaterThan(one.length);
  });

  it("a cut point only the runner crosses (a Map's result write) arms no step's function", () => {
    expect(functionsToArm(`${LOCAL_CUT_POINTS.mapRunResultWrite}:fail`, FUNCTIONS)).toEqual(['fn-other']);
  });

  it('every cut point a flow crosses, but the runner’s own, is armed in at least one step’s function', () => {
    const steps = FUNCTIONS.filter((f) => f.step !== undefined);
    const cutPoints = new Set(FLOWS.flatMap((f) => flowCutPoints(f.name)));
    cutPoints.delete(LOCAL_CUT_POINTS.mapRunResultWrite);
    const unarmed = [...cutPoints].filter((c) => functionsToArm(`${c}:fail`, steps).length === 0);
    expect(unarmed).toEqual([]);
  });
});
