// Loopback proxy for the conformance suite, which cannot send headers: adds the bearer token.
// Host and Origin naming this proxy are rewritten to name the server; any other (the suite's
// DNS-rebinding check sends evil.example.com) goes through as it came.
import http from 'node:http';
const [listenPort, target, token] = process.argv.slice(2);
const t = new URL(target);
const mine = new Set([`127.0.0.1:${listenPort}`, `localhost:${listenPort}`, `[::1]:${listenPort}`]);
http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  if (!headers.host || mine.has(headers.host)) headers.host = t.host;
  if (headers.origin) {
    try {
      const o = new URL(headers.origin);
      if (mine.has(o.host)) headers.origin = t.origin;
    } catch {}
  }
  const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
}).listen(Number(listenPort), '127.0.0.1');
