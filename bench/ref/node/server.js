// bench/ref/node/server.js: the raw Node reference of bench/run.sh. Node's
// own `http` module, no framework, one process (what `node server.js` runs),
// answering the benchmark's endpoints with the bodies of the bare Echo
// reference (bench/cmd/ref): the same JSON keys in the same (sorted) order,
// ended by a newline as Echo's encoder ends it.
//
//   node bench/ref/node/server.js PORT ROOT     # serves ROOT/public as static files
'use strict';

const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const querystring = require('node:querystring');

const port = Number(process.argv[2]);
const publicDir = path.resolve(process.argv[3] || '.', 'public');

function sendJSON(res, value) {
  const body = JSON.stringify(value) + '\n';
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

// Each query key with its value, or its values when there are several
// (querystring.parse gives that shape), keys sorted as Go's encoder sorts them.
function queryParams(qs) {
  const parsed = querystring.parse(qs);
  const params = {};
  for (const k of Object.keys(parsed).sort()) params[k] = parsed[k];
  return { async: true, query_params: params };
}

// The 100 records of api/bench/work.go, keys in Go's order.
function records(n) {
  const recs = [];
  for (let i = 0; i < n; i++) {
    recs.push({ active: i % 2 === 0, id: i, name: 'record ' + i, score: i * 1.5, tags: ['alpha', 'beta'] });
  }
  return { count: n, records: recs };
}

const types = { '.txt': 'text/plain; charset=utf-8', '.html': 'text/html; charset=utf-8', '.json': 'application/json' };

// A static answer as a raw Node server writes it: stat the file, then stream
// it from disk with its type and length (no cache, no ETag).
function sendStatic(res, pathname) {
  let rel;
  try { rel = decodeURIComponent(pathname); } catch { return notFound(res); }
  const file = path.join(publicDir, path.normalize(rel));
  if (!file.startsWith(publicDir + path.sep)) return notFound(res);
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) return notFound(res);
    res.writeHead(200, {
      'Content-Type': types[path.extname(file)] || 'application/octet-stream',
      'Content-Length': st.size,
      'Last-Modified': st.mtime.toUTCString(),
    });
    fs.createReadStream(file).pipe(res);
  });
}

function notFound(res) {
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('not found\n');
}

http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const pathname = q < 0 ? req.url : req.url.slice(0, q);
  switch (pathname) {
    case '/api/hello': return sendJSON(res, { message: 'hello' });
    case '/api/php/get': return sendJSON(res, queryParams(q < 0 ? '' : req.url.slice(q + 1)));
    case '/api/bench/work': return sendJSON(res, records(100));
    default: return sendStatic(res, pathname);
  }
}).listen(port, '127.0.0.1');
