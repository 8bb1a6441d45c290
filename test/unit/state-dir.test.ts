import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultStateDir } from '../../src/local/state-dir.js';

/** Where the CLI keeps its state: a clone keeps it inside, an installed CLI in the user's state directory. */
describe('the CLI state directory', () => {
  it('CUTPOINT_STATE_DIR wins', () => {
    expect(defaultStateDir({ CUTPOINT_STATE_DIR: '/tmp/x' }, '/work/cutpoint/')).toBe('/tmp/x');
  });

  it('a clone keeps .cutpoint/local in itself', () => {
    expect(defaultStateDir({}, '/work/cutpoint/')).toBe('/work/cutpoint/.cutpoint/local');
  });

  it('an installed CLI never writes under node_modules: XDG_STATE_HOME, else ~/.local/state', () => {
    const installed = '/usr/lib/node_modules/cutpoint/';
    expect(defaultStateDir({ XDG_STATE_HOME: '/var/state' }, installed)).toBe('/var/state/cutpoint/local');
    expect(defaultStateDir({}, installed)).toBe(`${homedir()}/.local/state/cutpoint/local`);
    expect(defaultStateDir({}, '/srv/app/node_modules/cutpoint/')).not.toContain('node_modules');
  });
});
