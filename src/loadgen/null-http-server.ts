// The null HTTP engine of the ceiling proof: answers every request with a fixed, realistic
// result body (k hits with ids and distances, as a vector database's JSON API returns them)
// without doing any search, so a client driving it measures only itself (and HTTP).
// Run as a process of its own: `node --import tsx src/loadgen/null-http-server.ts [port] [k] [address]`;
// prints "listening PORT" on stdout. Keep-alive, no per-request allocation of the body.
import { createServer } from 'node:http';

/** The fixed answer: k hits, ids and distances, ~40 bytes a hit. */
export function nullResultBody(k: number): Buffer {
  const ids = Array.from({ length: k }, (_, i) => 1_000_003 + i * 7919);
  const distances = Array.from({ length: k }, (_, i) => Number((0.1234567 + i * 0.0123457).toFixed(7)));
  return Buffer.from(JSON.stringify({ ids, distances, took_ms: 0 }));
}

export function startNullHttpServer(port: number, k: number, address = '127.0.0.1'): Promise<{ port: number; close: () => Promise<void> }> {
  const body = nullResultBody(k);
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
  const server = createServer((req, res) => {
    // The request body (a query vector) is read and dropped, as a real engine would read it.
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, headers);
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, address, () => {
      const addr = server.address();
      const p = typeof addr === 'object' && addr ? addr.port : port;
      resolve({ port: p, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.argv[2] ?? 0);
  const k = Number(process.argv[3] ?? 10);
  // Another address than loopback: client hosts elsewhere (docs/client-hosts.md).
  const s = await startNullHttpServer(port, k, process.argv[4] ?? '127.0.0.1');
  process.stdout.write(`listening ${s.port}\n`);
  // The parent holds our stdin: when it ends (the parent exited, even by SIGKILL), so do we.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  process.on('SIGTERM', () => process.exit(0));
}
