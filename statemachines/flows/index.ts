/** Every flow's spec, by name: what `npm run flows` prints to statemachines/<name>.asl.json. */
import type { FlowSpec } from '../spec/flow.js';
import commitGeneration from './commit-generation.js';
import deliverWindow from './deliver-window.js';
import deliveryExpire from './delivery-expire.js';
import deliveryReconcile from './delivery-reconcile.js';
import deliveryResume from './delivery-resume.js';
import deliveryRetire from './delivery-retire.js';
import publishClickhouse from './publish-clickhouse.js';
import qualityDiagnose from './quality-diagnose.js';
import qualityObserve from './quality-observe.js';
import qualityReplay from './quality-replay.js';
import streamAppend from './stream-append.js';
import streamCompact from './stream-compact.js';
import streamGc from './stream-gc.js';
import streamMaintain from './stream-maintain.js';
import streamMaterialize from './stream-materialize.js';
import streamResolveAppend from './stream-resolve-append.js';
import streamTakeover from './stream-takeover.js';
import streamTrim from './stream-trim.js';

export const FLOW_SPECS: readonly FlowSpec[] = [
  commitGeneration,
  deliverWindow,
  deliveryExpire,
  deliveryReconcile,
  deliveryResume,
  deliveryRetire,
  publishClickhouse,
  qualityDiagnose,
  qualityObserve,
  qualityReplay,
  streamAppend,
  streamCompact,
  streamGc,
  streamMaintain,
  streamMaterialize,
  streamResolveAppend,
  streamTakeover,
  streamTrim,
];
