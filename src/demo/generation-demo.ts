import { configForRuntime } from '../local/runtime-config.js';
import { FaultSwitch } from '../adapters/fault-injector.js';
import { awsPorts } from '../adapters/ports.js';
import { provisionLocal } from '../adapters/provision.js';
import { sha256Hex } from '../domain/digest.js';
import { CutpointError } from '../domain/errors.js';
import { parseFaultSpec } from '../domain/faults.js';
import { CUT_POINT_NAMES } from '../cut-points.js';
import { readVerified } from '../objects/exact-object.js';
import { RequestMeter } from '../adapters/request-meter.js';
import { runFlow } from '../local/flow-runner.js';
import { startLocalRuntime } from '../local/runtime.js';
import { progress } from '../cli/io.js';
import { reportFired } from '../cli/fault-report.js';

const DEFAULT_FAULT = 'generation.commit.cas:lose-response';

/** `cutpoint demo generation`: the generation-commit flow end to end, with a lost commit response. */
export async function generationDemo(): Promise<unknown> {
  progress('starting DynamoDB Local and the S3 emulator (in-memory, loopback only) …');
  const runtime = await startLocalRuntime();
  try {
    const config = configForRuntime(runtime, 'cutpoint-demo');
    await provisionLocal(config);
    const faults = new FaultSwitch();
    const meter = new RequestMeter();
    const ports = awsPorts(config, faults, meter);

    const texts = ['order 1001: 3 × widget\n', 'order 1002: 1 × gadget\n'];
    const sources = [];
    for (const [i, text] of texts.entries()) {
      const bytes = new TextEncoder().encode(text);
      const key = `demo/orders/wal-${i}`;
      await ports.objects.put('demo.source.put', key, bytes, { sha256: sha256Hex(bytes) });
      sources.push({ key, sha256: sha256Hex(bytes), size: bytes.byteLength });
    }
    progress(`wrote ${sources.length} source objects`);

    const spec = process.env.CUTPOINT_FAULTS?.trim() || DEFAULT_FAULT;
    // Only real cut points: a misspelt one would arm nothing and the demo would prove nothing.
    const injector = faults.arm(parseFaultSpec(spec, CUT_POINT_NAMES));
    progress(`armed fault: ${spec}`);
    const input = { root: 'demo/orders', generation: 0, taskId: 'materialize-orders-0', sources };
    const result = await runFlow('commit-generation', input, {
      ports,
      retryIntervalMs: 50,
      onEvent: (e) => {
        if (e.type === 'StateEntered') progress(`→ ${e.state}`);
        if (e.type === 'StateFailed' || e.type === 'StateCaught' || e.type === 'StateRetried') {
          progress(`  ${e.type} ${e.state ?? ''} ${e.error ?? ''}`.trimEnd());
        }
      },
    });
    faults.disarm();
    reportFired(injector);
    if (result.status !== 'SUCCEEDED') {
      throw new CutpointError(
        'Demo.Failed',
        'demo.flow_failed',
        `flow ended ${result.status}: ${result.error}: ${result.cause}`,
      );
    }
    const outcome = result.output as { outcome: string; objectKey?: string; sha256?: string; resolvedBy?: string };
    let verified = false;
    if (outcome.outcome === 'COMMITTED' && outcome.objectKey && outcome.sha256) {
      const object = await readVerified(ports.objects, outcome.objectKey, outcome.sha256);
      verified = new TextDecoder().decode(object.bytes) === texts.join('');
      progress(`read back ${object.size} bytes, SHA-256 verified`);
    }
    const records = await ports.authority.query('gen#demo/orders', 'record#');
    const committed = records.filter((r) => r.state === 'COMMITTED').length;
    if (outcome.outcome !== 'COMMITTED' || !verified || committed !== 1) {
      throw new CutpointError(
        'Demo.Failed',
        'demo.invariant_violated',
        `expected one verified COMMITTED generation, found ${committed}`,
      );
    }
    const resolvedVia = result.events.some((e) => e.type === 'StateEntered' && e.state === 'ResolveCommit');
    progress(
      resolvedVia
        ? 'the commit response was lost; ResolveCommit reloaded the exact winner — no second generation'
        : 'committed',
    );
    return {
      flow: 'commit-generation',
      status: result.status,
      outcome: result.output,
      faultsFired: injector.fired,
      recovery: resolvedVia ? 'ResolveCommit reloaded the exact winner' : 'none needed',
      committedGenerations: committed,
      bytesVerified: verified,
      stateTransitions: result.transitions,
      requests: meter.snapshot(),
    };
  } finally {
    await runtime.stop();
    progress('emulators stopped');
  }
}
