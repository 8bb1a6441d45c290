import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Loopback stand-ins where no emulator exists, for the `--aws` tests:
 * - a CloudFormation endpoint answering DescribeStacks (the query protocol's XML) from a
 *   table of stacks → outputs (there is no CloudFormation emulator);
 * - a recording pass-through in front of a real emulator (DynamoDB Local, the S3
 *   emulator): every request is forwarded unchanged, its SigV4 scope is recorded.
 * Both record `service/region` of each request's Authorization header, so a test sees the
 * region every client of one command signed for.
 */
export interface Loopback {
  endpoint: string;
  /** `service/region` of each request, in arrival order. */
  scopes: string[];
  close(): Promise<void>;
}

function scopeOf(req: IncomingMessage): string {
  const match = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\//.exec(req.headers.authorization ?? '');
  return match ? `${match[2]}/${match[1]}` : 'unsigned';
}

async function listen(server: Server, scopes: string[]): Promise<Loopback> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    scopes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** DescribeStacks for the stacks given (name → outputs); any other name is CloudFormation's ValidationError. */
export function fakeCloudFormation(stacks: Record<string, Record<string, string>>): Promise<Loopback> {
  const scopes: string[] = [];
  const server = createServer((req, res) => {
    scopes.push(scopeOf(req));
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const name = form.get('StackName') ?? '';
      res.setHeader('content-type', 'text/xml');
      const outputs = form.get('Action') === 'DescribeStacks' ? stacks[name] : undefined;
      if (!outputs) {
        res.statusCode = 400;
        res.end(
          `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`,
        );
        return;
      }
      const members = Object.entries(outputs)
        .map(([k, v]) => `<member><OutputKey>${xml(k)}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`)
        .join('');
      res.end(
        `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>` +
          `<StackName>${xml(name)}</StackName><StackId>arn:aws:cloudformation:eu-west-3:123456789012:stack/${xml(name)}/1</StackId>` +
          `<CreationTime>2026-01-01T00:00:00.000Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>${members}</Outputs>` +
          `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
    });
  });
  return listen(server, scopes);
}

/** Forwards every request to `upstream` (a loopback emulator) unchanged, recording its SigV4 scope. */
export function recordingProxy(upstream: string): Promise<Loopback> {
  const scopes: string[] = [];
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    scopes.push(scopeOf(req));
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  return listen(server, scopes);
}
