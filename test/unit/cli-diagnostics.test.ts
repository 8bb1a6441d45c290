import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH, parseJsonBounded } from '../../src/cli/input.js';
import { diagnosticOf, escapeControlCharacters, ValidationError } from '../../src/domain/errors.js';
import { runtimePorts } from '../../src/local/ports.js';

const systemError = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${code}: raw text /secret/path`), { code, ...extra });

describe('diagnosticOf', () => {
  it.each([
    [systemError('ENOENT', { path: '/x/route.yaml', syscall: 'open' }), 'cli.file_not_found', 'check the path'],
    [systemError('EACCES', { path: '/x/route.yaml', syscall: 'open' }), 'cli.file_permission_denied', 'permissions'],
    [systemError('EISDIR', { path: '/x', syscall: 'read' }), 'cli.file_not_regular', 'directory'],
    [systemError('EADDRINUSE', { port: 8000, syscall: 'listen' }), 'cutpoint.port_in_use', '--dynamodb-port'],
    [
      systemError('ECONNREFUSED', { port: 8000, syscall: 'connect' }),
      'cutpoint.connection_refused',
      'cutpoint local up',
    ],
    // fetch wraps it in a cause, happy eyeballs in an AggregateError
    [
      new TypeError('fetch failed', { cause: systemError('ECONNREFUSED') }),
      'cutpoint.connection_refused',
      'cutpoint local up',
    ],
    [
      Object.assign(new AggregateError([systemError('ECONNREFUSED', { port: 4566 })], ''), { code: 'ECONNREFUSED' }),
      'cutpoint.connection_refused',
      'port 4566',
    ],
    [systemError('ENOTFOUND'), 'cutpoint.network_unreachable', 'check the endpoint'],
  ])('a system error %# gets a stable code and the next step, not cutpoint.internal_error', (error, code, next) => {
    const d = diagnosticOf(error);
    expect(d.code).toBe(code);
    expect(d.message).toContain(next);
    expect(d.message).not.toContain('raw text');
  });

  it('anything else stays cutpoint.internal_error; a CutpointError keeps its code', () => {
    expect(diagnosticOf(new Error('boom')).code).toBe('cutpoint.internal_error');
    expect(diagnosticOf(Object.assign(new Error('x'), { code: 'ERR_SOMETHING' })).code).toBe('cutpoint.internal_error');
    expect(diagnosticOf(new ValidationError('stream.lane_missing', 'm')).code).toBe('stream.lane_missing');
  });

  it('escapes control characters echoed from input: one line, no raw ESC, CR, bidi override', () => {
    const d = diagnosticOf(new ValidationError('faults.invalid_spec', 'rule "a\u001b[31m\nforged: x\r\u202e\u009b"'));
    expect(d.message).toBe('rule "a\\x1b[31m\\nforged: x\\r\\u202e\\x9b"');
    expect(escapeControlCharacters('a\nb\tc', { keepNewlines: true })).toBe('a\nb\tc');
  });
});

describe('JSON input bounds', () => {
  it('measures nesting outside strings, iteratively', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[[{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[[["')).toBe(0);
    expect(jsonDepth('['.repeat(100_000))).toBe(100_000);
  });

  it(`refuses more than ${MAX_JSON_DEPTH} levels (cli.input_too_deep) and invalid JSON with the caller's code`, () => {
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(parseJsonBounded(nested(MAX_JSON_DEPTH), 'input', 'flow.invalid_input')).toBeDefined();
    expect(() => parseJsonBounded(nested(MAX_JSON_DEPTH + 1), 'input', 'flow.invalid_input')).toThrow(
      expect.objectContaining({ code: 'cli.input_too_deep' }),
    );
    expect(() => parseJsonBounded(nested(5000), 'input', 'flow.invalid_input')).toThrow(
      expect.objectContaining({ code: 'cli.input_too_deep' }),
    );
    expect(() => parseJsonBounded('{', 'input', 'flow.invalid_input')).toThrow(
      expect.objectContaining({ code: 'flow.invalid_input' }),
    );
  });
});

describe('local runtime ports', () => {
  it('flags win over CUTPOINT_DYNAMODB_PORT/CUTPOINT_S3_PORT, which win over 8000/4566', () => {
    expect(runtimePorts({}, {})).toEqual({ dynamodbPort: 8000, s3Port: 4566 });
    expect(runtimePorts({}, { CUTPOINT_DYNAMODB_PORT: '18000', CUTPOINT_S3_PORT: '14566' })).toEqual({
      dynamodbPort: 18000,
      s3Port: 14566,
    });
    expect(runtimePorts({ dynamodbPort: 28000 }, { CUTPOINT_DYNAMODB_PORT: '18000' })).toEqual({
      dynamodbPort: 28000,
      s3Port: 4566,
    });
  });

  it('refuses a malformed variable and one port for both', () => {
    for (const value of ['x', '0', '65536', '80.5', '-1']) {
      expect(() => runtimePorts({}, { CUTPOINT_S3_PORT: value })).toThrow(
        expect.objectContaining({ code: 'local.invalid_port' }),
      );
    }
    expect(() => runtimePorts({ s3Port: 8000 }, {})).toThrow(expect.objectContaining({ code: 'local.port_conflict' }));
  });
});
