// A SigV4-checking gate in front of s3rver, for tests/copilot/copilot_test.sh.
//
// s3rver 3.7.1 checks only that a V4 request's access key id exists: its authentication
// middleware says "Signature version 4 calculation is unimplemeneted" and accepts any
// signature. So that a wrong secret is refused, as real S3 does, this gate recomputes each
// request's signature on its own (Node's crypto, written from AWS's documented algorithm, not
// from Kozmo's C++), refuses a mismatch with S3's 403 SignatureDoesNotMatch, and forwards the
// rest to s3rver unchanged.
//
//   node sigv4_gate.js LISTEN_PORT UPSTREAM_PORT ACCESS_KEY_ID SECRET
'use strict';
const http = require('http');
const crypto = require('crypto');

const [listenPort, upstreamPort, keyId, secret] = process.argv.slice(2);

const sha256 = data => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
// RFC 3986 unreserved characters stay; everything else is %XX (upper case).
const encode = s =>
  encodeURIComponent(s).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());

function refuse(res, code, message) {
  res.writeHead(403, { 'Content-Type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

function check(req, body) {
  const auth = req.headers.authorization || '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return ['AccessDenied', 'no SigV4 Authorization header'];
  const [, id, date, region, service, signedHeaders, signature] = m;
  if (id !== keyId) return ['InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  const amzDate = req.headers['x-amz-date'] || '';
  const payloadHash = req.headers['x-amz-content-sha256'] || '';
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256(body))
    return ['XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.'];
  const url = new URL(req.url, 'http://gate');
  const path = url.pathname.split('/').map(seg => encode(decodeURIComponent(seg))).join('/');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [encode(k), encode(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders.split(';');
  const headers = names.map(n => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, path, query, headers, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac('AWS4' + secret, date);
  key = hmac(key, region);
  key = hmac(key, service);
  key = hmac(key, 'aws4_request');
  const expected = hmac(key, toSign).toString('hex');
  if (expected !== signature)
    return ['SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
  return null;
}

let checked = 0;
let refused = 0;
http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const problem = check(req, body);
      checked++;
      const range = req.headers.range ? ` range=${req.headers.range}` : '';
      if (!problem) process.stderr.write(`sigv4-gate: ok ${req.method} ${req.url}${range}\n`);
      if (problem) {
        refused++;
        process.stderr.write(`sigv4-gate: refused ${req.method} ${req.url}: ${problem[0]}\n`);
        return refuse(res, problem[0], problem[1]);
      }
      const up = http.request(
        { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
        upRes => {
          res.writeHead(upRes.statusCode, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', e => {
        res.writeHead(502);
        res.end(String(e));
      });
      up.end(body);
    });
  })
  .listen(Number(listenPort), '127.0.0.1', () => process.stderr.write(`sigv4-gate: listening on ${listenPort}\n`));

process.on('SIGTERM', () => {
  process.stderr.write(`sigv4-gate: checked ${checked} requests, refused ${refused}\n`);
  process.exit(0);
});
