import { createServer } from 'node:net';

/**
 * Asks the OS for a free loopback port by binding 127.0.0.1:0 and releasing it.
 *
 * Only needed for processes we cannot tell to listen on port 0 themselves
 * (DynamoDB Local takes a fixed `-port`). There is an unavoidable window between
 * releasing the port here and the emulator binding it; callers treat a bind
 * failure as a startup error rather than retrying silently.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected listen address: ${String(address)}`));
        return;
      }
      const { port } = address;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

/**
 * Fails fast when `port` is taken on loopback. Without this, a stranger already
 * listening there (say, another DynamoDB Local) would answer our readiness probe
 * and we would report success while our own emulator dies on EADDRINUSE.
 */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}
