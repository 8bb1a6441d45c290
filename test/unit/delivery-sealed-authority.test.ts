import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { invocationIdFrom } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import {
  assertAuthority,
  AuthorityMismatchError,
  recomputeAuthority,
  sealAuthority,
  validateSealedAuthority,
  verifySealed,
  type AuthorityInput,
  type SealedAuthority,
} from '../../src/domain/delivery/sealed-authority.js';
import { resolveWindow } from '../../src/domain/delivery/window.js';

const manifestText = `version: 1
bindings:
  events_ch:
    kind: clickhouse
    url_env: CH_URL
    password_env: CH_PASSWORD
    secret_arn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:events-ch"
  warehouse:
    kind: mssql
    url_env: MSSQL_URL
    password_env: MSSQL_PASSWORD
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 7, boundary: day }
    target: { binding: warehouse, table: dbo.events_daily, key_columns: [event_id], mode: replace_window }
  hourly:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: hour }
    target: { binding: warehouse, table: dbo.events_hourly, key_columns: [event_id], mode: merge }
`;

const manifest = parseManifest(manifestText, '/config/route.yaml');
const route = selectRoute(manifest, 'daily');
const invocationId = invocationIdFrom(new Uint8Array(16).fill(7));
const window = resolveWindow(route.route.window, new Date('2026-11-29T13:17:31Z'));

const input = (): AuthorityInput & { window: typeof window } => ({
  invocationId,
  manifestText,
  selector: '/config/route.yaml#daily',
  route,
  targetIdentity: { server: 'sql-prod-1', database: 'dwh', principal: 'cutpoint_delivery' },
  workRoot: '/var/lib/cutpoint/work',
  window,
});

const withBinding = (change: Partial<SelectedRoute['targetBinding']>): SelectedRoute => ({
  ...route,
  targetBinding: { ...route.targetBinding, ...change },
});

describe('sealAuthority', () => {
  it('seals digests and the exact window, nothing else', () => {
    const seal = sealAuthority(input());
    expect(Object.keys(seal).sort()).toEqual(
      [
        'bindingDigest',
        'identityDigest',
        'invocationId',
        'manifestDigest',
        'sealDigest',
        'selectorDigest',
        'version',
        'window',
        'workRootDigest',
      ].sort(),
    );
    expect(seal.window).toEqual({ start: '2026-11-22T00:00:00.000Z', end: '2026-11-29T00:00:00.000Z' });
    expect(seal.manifestDigest).toBe(sha256Hex(manifestText)); // `sha256sum route.yaml` agrees
    for (const d of [
      seal.selectorDigest,
      seal.bindingDigest,
      seal.identityDigest,
      seal.workRootDigest,
      seal.sealDigest,
    ]) {
      expect(d).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('is deterministic and independent of key order', () => {
    const a = sealAuthority(input());
    const reordered = sealAuthority({
      ...input(),
      targetIdentity: { principal: 'cutpoint_delivery', database: 'dwh', server: 'sql-prod-1' },
      route: {
        targetBinding: route.targetBinding,
        sourceBinding: route.sourceBinding,
        route: route.route,
        name: route.name,
      },
      selector: { route: 'daily', file: '/config/route.yaml' },
      window: { end: window.end, start: window.start },
    });
    expect(reordered).toEqual(a);
  });

  it('equal work roots digest equally; a relative root is refused', () => {
    const a = sealAuthority(input());
    for (const workRoot of ['/var/lib/cutpoint/work/', '/var/lib/./cutpoint/work', '/var/lib/cutpoint/x/../work']) {
      expect(sealAuthority({ ...input(), workRoot }).workRootDigest).toBe(a.workRootDigest);
    }
    expect(() => sealAuthority({ ...input(), workRoot: 'work' })).toThrow(
      expect.objectContaining({ code: 'delivery.work_root_invalid' }),
    );
  });

  it.each<[string, (i: ReturnType<typeof input>) => ReturnType<typeof input>, keyof SealedAuthority]>([
    ['one byte of the manifest', (i) => ({ ...i, manifestText: `${i.manifestText} ` }), 'manifestDigest'],
    ['the selector file', (i) => ({ ...i, selector: '/config/other.yaml#daily' }), 'selectorDigest'],
    ['a binding env name', (i) => ({ ...i, route: withBinding({ passwordEnv: 'OTHER_PASSWORD' }) }), 'bindingDigest'],
    [
      'a binding secret ARN',
      (i) => ({ ...i, route: withBinding({ secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:w' }) }),
      'bindingDigest',
    ],
    ['a binding kind', (i) => ({ ...i, route: withBinding({ kind: 'postgres' }) }), 'bindingDigest'],
    [
      'the source binding',
      (i) => ({ ...i, route: { ...route, sourceBinding: { ...route.sourceBinding, urlEnv: 'CH2_URL' } } }),
      'bindingDigest',
    ],
    [
      'the target server',
      (i) => ({ ...i, targetIdentity: { ...i.targetIdentity, server: 'sql-prod-2' } }),
      'identityDigest',
    ],
    [
      'the target principal',
      (i) => ({ ...i, targetIdentity: { ...i.targetIdentity, principal: 'sa' } }),
      'identityDigest',
    ],
    [
      'an added identity fact',
      (i) => ({ ...i, targetIdentity: { ...i.targetIdentity, port: 1433 } }),
      'identityDigest',
    ],
    ['the work root', (i) => ({ ...i, workRoot: '/var/lib/cutpoint/work2' }), 'workRootDigest'],
    ['the invocation', (i) => ({ ...i, invocationId: invocationIdFrom(new Uint8Array(16).fill(8)) }), 'invocationId'],
  ])('changes when %s changes', (_label, change, field) => {
    const a = sealAuthority(input());
    const b = sealAuthority(change(input()));
    expect(b[field]).not.toEqual(a[field]);
    expect(b.sealDigest).not.toBe(a.sealDigest);
    const others = (
      ['manifestDigest', 'selectorDigest', 'bindingDigest', 'identityDigest', 'workRootDigest', 'invocationId'] as const
    ).filter((f) => f !== field);
    for (const f of others) expect(b[f]).toBe(a[f]);
  });

  it('the window changes only the seal digest', () => {
    const a = sealAuthority(input());
    const b = sealAuthority({ ...input(), window: { ...window, end: '2026-11-29T00:00:00.001Z' } });
    expect(b.sealDigest).not.toBe(a.sealDigest);
    expect({ ...b, sealDigest: '', window: null }).toEqual({ ...a, sealDigest: '', window: null });
  });

  it('selecting another route through the selector changes it; a selector that disagrees with the route is refused', () => {
    const hourly = selectRoute(manifest, 'hourly');
    const a = sealAuthority(input());
    const b = sealAuthority({ ...input(), selector: '/config/route.yaml#hourly', route: hourly });
    expect(b.selectorDigest).not.toBe(a.selectorDigest);
    expect(b.bindingDigest).toBe(a.bindingDigest); // same two bindings
    expect(() => sealAuthority({ ...input(), selector: '/config/route.yaml#hourly' })).toThrow(
      expect.objectContaining({ code: 'delivery.selector_invalid' }),
    );
  });

  it('holds no credential: digests only, and env values are never read', () => {
    const secretValues = {
      CH_PASSWORD: 'hunter2-clickhouse',
      MSSQL_PASSWORD: 'hunter2-mssql',
      MSSQL_URL: 'mssql://sa:hunter2@db',
    };
    const saved = Object.fromEntries(Object.keys(secretValues).map((k) => [k, process.env[k]]));
    const before = sealAuthority(input());
    Object.assign(process.env, secretValues);
    try {
      const seal = sealAuthority(input());
      const text = JSON.stringify(seal);
      expect(seal).toEqual(before); // values in the environment change nothing
      for (const needle of [
        'hunter2',
        'MSSQL_PASSWORD',
        'CH_PASSWORD',
        'secretsmanager',
        'sql-prod-1',
        '/var/lib',
        'route.yaml',
      ]) {
        expect(text).not.toContain(needle);
      }
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('refuses identity keys that would hold a credential', () => {
    for (const key of ['password', 'connection_string', 'token', 'secret', 'url']) {
      expect(() => sealAuthority({ ...input(), targetIdentity: { server: 's', [key]: 'x' } })).toThrow(
        expect.objectContaining({ code: 'delivery.identity_invalid' }),
      );
    }
    expect(() => sealAuthority({ ...input(), targetIdentity: {} })).toThrow(
      expect.objectContaining({ code: 'delivery.identity_invalid' }),
    );
  });

  it('refuses a malformed invocation id or window', () => {
    expect(() => sealAuthority({ ...input(), invocationId: 'inv-1' })).toThrow(
      expect.objectContaining({ code: 'delivery.invocation_id_invalid' }),
    );
    expect(() => sealAuthority({ ...input(), window: { start: '2026-11-22T00:00:00Z', end: window.end } })).toThrow(
      expect.objectContaining({ code: 'delivery.window_invalid' }),
    );
  });
});

describe('verifySealed / assertAuthority', () => {
  const seal = sealAuthority(input());

  it('agrees with the same inputs, recomputed later without a window', () => {
    const { window: _w, ...rest } = input();
    expect(verifySealed(seal, recomputeAuthority(rest))).toEqual([]);
    expect(() => assertAuthority(seal, recomputeAuthority(rest))).not.toThrow();
  });

  it('names every mismatching field, never values or digests', () => {
    const recomputed = recomputeAuthority({
      ...input(),
      manifestText: `${manifestText}# edited\n`,
      targetIdentity: { server: 'sql-dr-1', database: 'dwh', principal: 'cutpoint_delivery' },
      workRoot: '/tmp/elsewhere',
    });
    expect(verifySealed(seal, recomputed)).toEqual(['manifestDigest', 'identityDigest', 'workRootDigest']);
    try {
      assertAuthority(seal, recomputed);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AuthorityMismatchError);
      const error = e as AuthorityMismatchError;
      expect(error).toMatchObject({ name: 'Delivery.AuthorityMismatch', code: 'delivery.recovery_authority_mismatch' });
      expect(error.fields).toEqual(['manifestDigest', 'identityDigest', 'workRootDigest']);
      for (const needle of ['sql-dr-1', '/tmp/elsewhere', seal.manifestDigest, recomputed.manifestDigest, 'edited']) {
        expect(error.message).not.toContain(needle);
      }
    }
  });

  it('a seal edited in the journal fails its own digest', () => {
    const tampered = { ...seal, window: { ...seal.window, start: '2026-11-21T00:00:00.000Z' } };
    expect(verifySealed(tampered, recomputeAuthority(input()))).toEqual(['sealDigest']);
  });
});

describe('validateSealedAuthority (reading the seal back)', () => {
  const seal = sealAuthority(input());

  it('round-trips through JSON', () => {
    expect(validateSealedAuthority(JSON.parse(JSON.stringify(seal)))).toEqual(seal);
  });

  it.each<[string, unknown]>([
    ['missing', undefined],
    ['another version', { ...seal, version: 2 }],
    ['a bad invocation id', { ...seal, invocationId: 'inv-x' }],
    ['a bad digest', { ...seal, bindingDigest: 'ABC' }],
    ['a bad window', { ...seal, window: { start: seal.window.end, end: seal.window.start } }],
    ['an edited window', { ...seal, window: { ...seal.window, end: '2026-11-30T00:00:00.000Z' } }],
    ['an edited digest', { ...seal, workRootDigest: sha256Hex('other') }],
  ])('refuses %s as an inconsistent journal', (_label, value) => {
    expect(() => validateSealedAuthority(value)).toThrow(
      expect.objectContaining({ name: 'Delivery.JournalUnavailable', code: 'delivery.recovery_journal_inconsistent' }),
    );
  });
});
