import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EventSource } from './delivery-world.js';

/** The fuzz world's evidence helpers (test/support/fuzz-world.ts): files, histories, session ids, the ClickHouse catalogue. */

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
  return port;
}

/** The tables of the embedded ClickHouse outside its system databases, one per line. */
export async function clickhouseCatalogue(source: EventSource): Promise<string> {
  const result = await source.ch.client.query({
    query:
      "SELECT database, name, engine, total_rows FROM system.tables WHERE database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') ORDER BY database, name",
    format: 'JSONEachRow',
  });
  return ((await result.json()) as unknown[]).map((row) => JSON.stringify(row)).join('\n');
}

/** Every fencing session id the authority holds or the CLI stored (lane heads, session files). */
export function sessionIds(snap: { authority: string; sessions: string }): string[] {
  const ids = new Set<string>();
  for (const m of `${snap.authority}\n${snap.sessions}`.matchAll(
    /\\?"session\\?":\s*(?:\{\\?"S\\?":)?\s*\\?"([^"\\]{8,})\\?"/g,
  ))
    if (m[1]) ids.add(m[1]);
  return [...ids];
}

/** The execution histories under `dir` whose status is not FAILED (unreadable ones too). */
export async function historiesNotFailed(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const name of names.sort()) {
    const status = await readFile(join(dir, name), 'utf8')
      .then((text) => (JSON.parse(text) as { status?: unknown }).status)
      .catch(() => 'unreadable');
    if (status !== 'FAILED') out.push(`${name} ${String(status)}`);
  }
  return out;
}

/**
 * Every entry under `dir` (directories too), except the top-level names in `skip`: path,
 * mode and size, and for regular files their SHA-256 (with `contents`, also the text of
 * files up to 4 KiB, so a failing comparison shows what changed).
 */
export async function fileTree(
  dir: string,
  skip: string[],
  options: { contents: boolean },
  prefix = '',
): Promise<string[]> {
  const out: string[] = [];
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    if (!prefix && skip.includes(name)) continue;
    const path = join(dir, name);
    const rel = `${prefix}${name}`;
    const st = await lstat(path);
    if (st.isDirectory()) {
      out.push(`${rel}/ ${(st.mode & 0o777).toString(8)}`);
      out.push(...(await fileTree(path, skip, options, `${rel}/`)));
    } else if (st.isFile() && options.contents) {
      const bytes = await readFile(path);
      const text = bytes.byteLength <= 4096 ? `\n${bytes.toString('utf8')}` : '';
      out.push(
        `${rel} ${(st.mode & 0o777).toString(8)} ${st.size} ${createHash('sha256').update(bytes).digest('hex')}${text}`,
      );
    } else
      out.push(
        `${rel} ${st.isFile() ? 'file' : st.isFIFO() ? 'fifo' : 'other'} ${(st.mode & 0o777).toString(8)} ${st.size} ${st.mtimeMs}`,
      );
  }
  return out;
}
