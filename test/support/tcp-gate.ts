import { connect, createServer, type Socket } from 'node:net';

/**
 * A loopback TCP gate in front of a real server (the embedded PostgreSQL): while it is
 * shut, every connection is accepted and reset at once, as a server that is down or
 * unreachable looks to a client; open, it relays bytes both ways untouched. Not a fake of
 * the server: the protocol on the wire is the server's own.
 */
export interface TcpGate {
  port: number;
  /** Connections reset so far. */
  refused(): number;
  /** Refuse the next `n` connections (Infinity: until `open()`), then relay. */
  shut(n?: number): void;
  open(): void;
  close(): Promise<void>;
}

export async function openTcpGate(upstreamPort: number): Promise<TcpGate> {
  let toRefuse = 0;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (toRefuse > 0) {
      toRefuse--;
      refused++;
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the gate has no TCP port');
  return {
    port: address.port,
    refused: () => refused,
    shut: (n = Infinity) => {
      toRefuse = n;
    },
    open: () => {
      toRefuse = 0;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
