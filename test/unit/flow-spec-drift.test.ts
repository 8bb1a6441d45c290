import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedFlows } from '../../statemachines/generate.js';

/*
 * statemachines/*.asl.json are generated from the flow specs (statemachines/flows/): each is
 * printed in memory and compared with the committed file byte for byte. Editing a spec
 * without `npm run flows`, or editing a generated file by hand, fails here, naming the file.
 */
const dir = fileURLToPath(new URL('../../statemachines/', import.meta.url));

describe('statemachines/*.asl.json: generated from the flow specs, never drifting from them', () => {
  const flows = generatedFlows();

  it('every committed ASL file has a spec, and every spec a committed file', () => {
    const committed = readdirSync(dir)
      .filter((f) => f.endsWith('.asl.json'))
      .sort();
    expect(flows.map((f) => `${f.name}.asl.json`).sort()).toEqual(committed);
  });

  it.each(flows.map((f) => [f.file, f] as const))('%s is what its spec prints (else: npm run flows)', (_file, flow) => {
    expect(
      readFileSync(`${dir}${flow.name}.asl.json`, 'utf8') === flow.text,
      `${flow.file} differs from statemachines/flows/${flow.name}.ts: run npm run flows`,
    ).toBe(true);
  });
});
