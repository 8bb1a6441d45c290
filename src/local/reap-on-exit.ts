import type { ChildProcess } from 'node:child_process';

/**
 * Kills registered child processes when this process goes away, so an emulator
 * (a JVM) never outlives the test run or CLI that started it.
 *
 * `process.on('exit')` alone is not enough: a Node process terminated by a
 * signal it does not handle exits without emitting 'exit'. So while children
 * are registered we also listen for the usual termination signals, kill the
 * children, and re-raise the signal when nobody else handles it, which keeps the
 * default "die on Ctrl-C / SIGTERM" behaviour intact.
 */

const children = new Set<ChildProcess>();
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
  children.clear();
}

function onExit(): void {
  killAll();
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  uninstall();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function install(): void {
  process.on('exit', onExit);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  process.removeListener('exit', onExit);
  for (const signal of SIGNALS) process.removeListener(signal, onSignal);
}

/** Registers `child` until it exits; returns nothing because unregistering is automatic. */
export function reapOnExit(child: ChildProcess): void {
  if (children.size === 0) install();
  children.add(child);
  child.once('exit', () => {
    children.delete(child);
    // Leave no listeners behind once nothing needs reaping, so a long-lived
    // process (a test worker) keeps its default signal behaviour.
    if (children.size === 0) uninstall();
  });
}
