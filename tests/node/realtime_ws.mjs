// A Realtime session through slp with the `ws` npm client (run by tests/integration/tst_realtime
// and bench/tunnel.sh):
//   node realtime_ws.mjs WS_BASE_URL MODEL MODE
// MODE: client-close | server-close | hold:MS | echo:N
//   client-close  session.update, 1 MiB of input_audio_buffer.append in 8 KiB events, commit
//                 (the backend's byte count and SHA-256 must match), response.create and its
//                 deltas, then the client closes with 1000;
//   server-close  the same, then the backend closes first (it is asked to);
//   hold:MS       like client-close, but waits MS ms after session.updated (prints HOLDING)
//                 so a test can reload slp meanwhile;
//   echo:N        N small echo messages one at a time; prints p50_us=... p99_us=...
// Success prints one JSON line {"ok":true,...} and exits 0; a failure exits 1 and says why.
import { createHash, randomBytes } from 'node:crypto';
import WebSocket from 'ws';

const [base, model, mode = 'client-close'] = process.argv.slice(2);
if (!base || !model) {
  console.error('usage: node realtime_ws.mjs WS_BASE_URL MODEL MODE');
  process.exit(2);
}
const deadline = setTimeout(() => fail('timed out after 30 s'), 30000);
function fail(why) {
  console.error(`realtime_ws: ${why}`);
  process.exit(1);
}

const url = `${base}/v1/realtime?model=${encodeURIComponent(model)}`;
const socket = new WebSocket(url, 'realtime', {
  headers: { Authorization: 'Bearer sk-test', 'OpenAI-Beta': 'realtime=v1' },
});
const waiting = [];
const inbox = [];
socket.on('message', (data) => {
  const event = JSON.parse(data.toString());
  const i = waiting.findIndex((w) => w.types.includes(event.type));
  if (i >= 0) waiting.splice(i, 1)[0].resolve(event);
  else inbox.push(event);
});
socket.on('unexpected-response', (req, res) => fail(`upgrade answered ${res.statusCode}`));
socket.on('error', (e) => fail(`socket error: ${e.message}`));
// The session ends the connection itself (a close from either side, asked for); a close
// before that is a failure, reported at once.
let ending = false;
const closed = new Promise((resolve) => socket.on('close', (code) => {
  if (!ending) fail(`connection closed mid-session (code ${code})`);
  resolve(code);
}));
// The first event (in arrival order) of any of `types`.
function next(...types) {
  const i = inbox.findIndex((e) => types.includes(e.type));
  if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]);
  return new Promise((resolve) => waiting.push({ types, resolve }));
}
const send = (event) => socket.send(JSON.stringify(event));

async function echo(n) {
  const rtts = [];
  const payload = { type: 'echo', payload: 'x'.repeat(80) };
  for (let i = 0; i < n; ++i) {
    const t0 = process.hrtime.bigint();
    send(payload);
    await next('echo');
    rtts.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  rtts.sort((a, b) => a - b);
  const at = (q) => rtts[Math.min(rtts.length - 1, Math.floor(q * rtts.length))];
  console.log(`p50_us=${at(0.5).toFixed(1)} p99_us=${at(0.99).toFixed(1)}`);
  ending = true;
  socket.close(1000);
  await closed;
}

async function session() {
  await new Promise((resolve) => socket.once('open', resolve));
  const created = await next('session.created');
  if (mode.startsWith('echo:')) {
    await echo(Number(mode.slice(5)));
    clearTimeout(deadline);
    return;
  }
  send({ type: 'session.update', session: { modalities: ['text'], voice: 'alloy' } });
  const updated = await next('session.updated');
  if (updated.session?.voice !== 'alloy') fail('session.updated does not carry the update');
  if (mode.startsWith('hold:')) {
    process.stdout.write('HOLDING\n');
    await new Promise((resolve) => setTimeout(resolve, Number(mode.slice(5))));
  }
  const audio = randomBytes(1 << 20);
  for (let at = 0; at < audio.length; at += 8192)
    send({ type: 'input_audio_buffer.append', audio: audio.subarray(at, at + 8192).toString('base64') });
  send({ type: 'input_audio_buffer.commit' });
  const committed = await next('input_audio_buffer.committed');
  const sha = createHash('sha256').update(audio).digest('hex');
  if (committed.bytes !== audio.length || committed.sha256 !== sha)
    fail(`the backend got ${committed.bytes} bytes (sha256 ${committed.sha256}), not ours`);
  send({ type: 'response.create' });
  await next('response.created');
  let deltas = 0;
  while ((await next('response.output_text.delta', 'response.done')).type !== 'response.done')
    ++deltas;
  ending = true;
  if (mode === 'server-close') send({ type: 'server.close' });
  else socket.close(1000);
  const closeCode = await closed;
  clearTimeout(deadline);
  console.log(JSON.stringify({
    ok: true, model: created.session?.model, target: created.target, bytes: committed.bytes,
    appends: committed.appends, deltas, closeCode,
  }));
}

session().catch((e) => fail(e.stack || String(e)));
