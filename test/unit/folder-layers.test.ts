import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The folder layers lint enforces (eslint/folder-layers.js): a forbidden edge fails
 * `npm run lint`, judged by where a relative import lands (type-only and dynamic ones too).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${file}` });
  return result!.messages.filter((m) => m.ruleId === 'cutpoint/folder-layers').map((m) => m.message);
}

describe('folder layers', () => {
  it('refuses a forbidden edge, static, type-only or dynamic, naming both folders', async () => {
    expect(await layerErrors('src/stream/x.ts', "import { a } from '../delivery/deps.js';\nvoid a;\n")).toEqual([
      expect.stringContaining('src/stream may not import src/delivery'),
    ]);
    expect(
      await layerErrors('src/domain/x.ts', "import type { A } from '../stream/read.js';\nexport type B = A;\n"),
    ).toEqual([expect.stringContaining('src/domain may not import src/stream')]);
    expect(
      await layerErrors('src/domain/x.ts', "import type { A } from '../ports/authority.js';\nexport type B = A;\n"),
    ).toEqual([expect.stringContaining('src/domain may not import src/ports')]);
    expect(
      await layerErrors(
        'src/domain/delivery/x.ts',
        "import type { A } from '../../adapters/ports.js';\nexport type B = A;\n",
      ),
    ).toEqual([expect.stringContaining('src/domain may not import src/adapters')]);
    expect(
      await layerErrors(
        'src/generation/x.ts',
        "export const m = () => import('../../functions/generation/commit.js');\n",
      ),
    ).toEqual([
      expect.stringContaining('src/generation may not import functions'),
      expect.stringContaining('src may not import functions'),
    ]);
  });

  it('lets only src/registry under src/ refer to functions/ (the CLI, the local runner, the cost model build handlers through it)', async () => {
    const deps = (up: string) =>
      `import { routeOfEvent } from '${up}functions/lib/delivery-deps.js';\nvoid routeOfEvent;\n`;
    for (const [file, up] of [
      ['src/cli/commands/x.ts', '../../../'],
      ['src/local/x.ts', '../../'],
      ['src/cost/x.ts', '../../'],
      ['src/telemetry/x.ts', '../../'],
    ] as const)
      expect(await layerErrors(file, deps(up))).toEqual([expect.stringContaining('src may not import functions')]);
    expect(
      await layerErrors(
        'src/registry/x.ts',
        "export const load = () => import('../../functions/delivery/begin.js');\n",
      ),
    ).toEqual([]);
  });

  it('keeps delivery free of the exchange publication and its governance, and both free of adapters', async () => {
    expect(
      await layerErrors(
        'src/delivery/steps/x.ts',
        "import { a } from '../../publication/exchange-deps.js';\nvoid a;\n",
      ),
    ).toEqual([expect.stringContaining('src/delivery may not import src/publication')]);
    expect(
      await layerErrors(
        'src/delivery/x.ts',
        "import type { A } from '../quality/observe-reader.js';\nexport type B = A;\n",
      ),
    ).toEqual([expect.stringContaining('src/delivery may not import src/quality')]);
    expect(
      await layerErrors('src/publication/x.ts', "import { a } from '../adapters/clickhouse/client.js';\nvoid a;\n"),
    ).toEqual([expect.stringContaining('src/publication may not import src/adapters')]);
    expect(
      await layerErrors('src/quality/x.ts', "import { a } from '../adapters/reader-process/runner.js';\nvoid a;\n"),
    ).toEqual([expect.stringContaining('src/quality may not import src/adapters')]);
    // The other way round is the design: the exchange mode builds on delivery, the reader adapter serves quality.
    expect(await layerErrors('src/publication/x.ts', "import { a } from '../delivery/deps.js';\nvoid a;\n")).toEqual(
      [],
    );
    expect(
      await layerErrors('src/quality/x.ts', "import { a } from '../publication/exchange-deps.js';\nvoid a;\n"),
    ).toEqual([]);
  });

  it('lets an import inside its own layer, or one the table allows, through', async () => {
    expect(await layerErrors('src/domain/delivery/x.ts', "import { a } from '../stream.js';\nvoid a;\n")).toEqual([]);
    expect(await layerErrors('src/stream/x.ts', "import { a } from '../generation/load.js';\nvoid a;\n")).toEqual([]);
    expect(await layerErrors('src/delivery/x.ts', "import { a } from '../domain/stream.js';\nvoid a;\n")).toEqual([]);
  });
});
