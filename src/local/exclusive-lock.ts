import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isAlive } from './runtime-state.js';

/**
 * One process at a time on this machine: a lock file created exclusively (O_EXCL) holding
 * the holder's pid, removed when it is done. A lock whose pid no longer runs (its holder
 * was killed) is taken over. Used where two local processes must not act at once: two
 * `cutpoint local up` of one state directory, two `delivery run` of one invocation.
 */
export type LockAttempt = { held: true; release: () => Promise<void> } | { held: false; holder: number };

export async function tryLock(path: string): Promise<LockAttempt> {
  await mkdir(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      await file.writeFile(`${process.pid}\n`);
      await file.close();
      return { held: true, release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    // Being written (empty yet) or held by a live process: someone else has it.
    if (!Number.isSafeInteger(holder) || holder <= 0) return { held: false, holder: 0 };
    if (isAlive(holder)) return { held: false, holder };
    await rm(path, { force: true }); // its holder is gone: take it over
  }
  return { held: false, holder: 0 };
}

/** Whether the lock at `path` is held now: by a live process, or being taken (created, its pid not written yet). */
export async function lockHeld(path: string): Promise<boolean> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  const holder = Number(text.trim());
  return text.trim() === '' || (Number.isSafeInteger(holder) && holder > 0 && isAlive(holder));
}
