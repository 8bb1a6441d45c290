import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEMO_MANIFEST } from '../../src/demo/delivery-demo.js';
import { QUALITY_DEMO_MANIFEST } from '../../src/demo/quality-demo-world.js';
import { parseManifest } from '../../src/domain/delivery/manifest.js';
import { MANIFEST_SCHEMA_PATH, schemaFiles } from '../../src/docs/schemas/generate.js';
import { assertFlowInput } from '../../src/engine/flow-input.js';
import { FLOW_INPUTS } from '../../src/engine/flow-input-fields.js';
import { fixedWindowManifest } from '../support/delivery-world.js';
import { MANIFEST_TEXT } from '../support/fuzz-world.js';
import { publicationManifest } from '../support/publication-world.js';
import { fencedBlocks, repoFile } from './readme-blocks.js';

/*
 * schemas/ is generated from the zod schemas the code validates with (npm run schemas):
 * each file is compared with what the schema prints, byte for byte. Every example manifest
 * (the docs', the demos', the test worlds') is valid JSON Schema-wise (ajv) and to the
 * parser; the docs' carry the yaml-language-server line naming the schema.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const files = schemaFiles();
const ajv = new Ajv({ allErrors: true, strict: false });
const manifestSchema = ajv.compile(JSON.parse(repoFile(MANIFEST_SCHEMA_PATH)) as object);

describe('schemas/: generated from the zod schemas, never drifting from them', () => {
  it('every committed schema is generated, and every generated one committed', () => {
    const committed = [
      'schemas/manifest.schema.json',
      ...readdirSync(`${root}schemas/flow-inputs`).map((f) => `schemas/flow-inputs/${f}`),
    ];
    expect([...files.keys()].sort()).toEqual(committed.sort());
  });

  it.each([...files.keys()])('%s is what its zod schema prints (else: npm run schemas)', (path) => {
    expect(readFileSync(`${root}${path}`, 'utf8') === files.get(path), `${path}: run npm run schemas`).toBe(true);
  });
});

const readmeManifests = ['docs/delivery.md', 'docs/deploy.md']
  .flatMap((doc) => fencedBlocks(repoFile(doc)))
  .filter((b) => b.lang === 'yaml' && /^version: 1$/m.test(b.body) && /^routes:$/m.test(b.body))
  .map((b, i) => [`docs manifest ${i + 1}`, b.body] as const);

const examples: Array<readonly [string, string]> = [
  ...readmeManifests,
  ['src/demo DEMO_MANIFEST', DEMO_MANIFEST],
  ['src/demo QUALITY_DEMO_MANIFEST', QUALITY_DEMO_MANIFEST],
  ['test/support fuzz-world MANIFEST_TEXT', MANIFEST_TEXT],
  ['test/support publicationManifest()', publicationManifest()],
  ['test/support fixedWindowManifest()', fixedWindowManifest({ daily: { table: 'events_daily', chunkRows: 1000 } })],
];

describe('example manifests validate against schemas/manifest.schema.json and parse', () => {
  it('the docs show their manifests', () => expect(readmeManifests.length).toBeGreaterThanOrEqual(2));

  it.each(examples)('%s', (_name, text) => {
    const valid = manifestSchema(parse(text, { schema: 'core' }));
    expect(manifestSchema.errors ?? [], 'JSON Schema errors').toEqual([]);
    expect(valid).toBe(true);
    expect(() => parseManifest(text, 'route.yaml')).not.toThrow();
  });

  // The AWS manifest (docs/deploy.md "Deploy and run on AWS") lives in /etc/cutpoint and is docs/flows.md's manifestText byte for byte: no relative path there.
  it('docs/delivery.md "The route manifest" names the schema for editors (yaml-language-server)', () => {
    const text = readmeManifests[0]![1];
    const path = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)?.[1];
    expect(path, 'a "# yaml-language-server: $schema=…" line').toBeDefined();
    expect(path!.endsWith(MANIFEST_SCHEMA_PATH) && existsSync(`${root}${MANIFEST_SCHEMA_PATH}`)).toBe(true);
  });

  it('what the parser refuses for its shape, the JSON Schema refuses too', () => {
    const broken = [
      DEMO_MANIFEST.replace('version: 1', 'version: 2'),
      DEMO_MANIFEST.replace(/^routes:$/m, 'route:'),
      DEMO_MANIFEST.replace(/mode: \w+/, 'mode: upsert'),
      DEMO_MANIFEST.replace(/key_columns: \[/, 'key_columns: [1bad, '),
    ];
    for (const text of broken) {
      expect(text).not.toBe(DEMO_MANIFEST);
      expect(() => parseManifest(text, 'route.yaml')).toThrow(
        expect.objectContaining({ code: 'delivery.manifest_invalid' }),
      );
      expect(manifestSchema(parse(text, { schema: 'core' })), text).toBe(false);
    }
  });
});

describe('flow input schemas agree with assertFlowInput', () => {
  it.each(Object.keys(FLOW_INPUTS))('%s: its fields pass, an unknown field fails, in both', (flow) => {
    const validate = ajv.compile(JSON.parse(repoFile(`schemas/flow-inputs/${flow}.schema.json`)) as object);
    const fields = Object.fromEntries(FLOW_INPUTS[flow]!.fields.map((f) => [f, 'x']));
    expect(validate({})).toBe(true);
    expect(validate({ ...fields, dryrun: true })).toBe(false);
    expect(() => assertFlowInput(flow, { ...fields, dryrun: true })).toThrow(
      expect.objectContaining({ code: 'flow.input_unknown_field' }),
    );
  });
});
