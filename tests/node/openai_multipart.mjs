// The multipart half of the OpenAI surface through slp with the real `openai` npm client:
// audio.transcriptions.create with a generated WAV file and images.edit with a generated PNG.
// A fetch wrapper keeps the exact bytes the client sent (the body the client's own FormData
// encoding made) so tests/integration/tst_multipart.cpp can check that the backend got those
// bytes with only the model value renamed. Prints one JSON object.
// usage: node openai_multipart.mjs BASE_URL AUDIO_MODEL IMAGE_MODEL
import OpenAI, { toFile } from 'openai';
import { deflateSync } from 'node:zlib';

// Node 18 (Debian 12's) has File only in node:buffer; the client's uploads need the global,
// as the client's own error message says.
if (typeof globalThis.File === 'undefined')
    globalThis.File = (await import('node:buffer')).File;

const [baseURL, audioModel, imageModel] = process.argv.slice(2);
let lastSent = null;
async function keepingFetch(url, init) {
    const request = new Request(url, init); // encodes a FormData body once, boundary and all
    const bytes = Buffer.from(await request.arrayBuffer());
    lastSent = { contentType: request.headers.get('content-type'), bytes };
    return fetch(request.url, {
        method: request.method, headers: request.headers, body: bytes, signal: init?.signal,
    });
}
const client = new OpenAI({
    baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 30000, fetch: keepingFetch,
});

// 1 s of a 440 Hz tone: 16 kHz, mono, 16-bit PCM in a RIFF/WAVE container.
function wav(seconds = 1, rate = 16000) {
    const samples = seconds * rate;
    const b = Buffer.alloc(44 + samples * 2);
    b.write('RIFF', 0); b.writeUInt32LE(36 + samples * 2, 4); b.write('WAVE', 8);
    b.write('fmt ', 12); b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22);
    b.writeUInt32LE(rate, 24); b.writeUInt32LE(rate * 2, 28); b.writeUInt16LE(2, 32);
    b.writeUInt16LE(16, 34); b.write('data', 36); b.writeUInt32LE(samples * 2, 40);
    for (let i = 0; i < samples; i++)
        b.writeInt16LE(Math.round(8000 * Math.sin(2 * Math.PI * 440 * i / rate)), 44 + 2 * i);
    return b;
}

// A 64x64 RGBA gradient PNG (IHDR, one IDAT, IEND), CRCs computed here.
const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
});
function crc32(buf) {
    let c = 0xffffffff;
    for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0); out.write(type, 4); data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
}
function png(size = 64) {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(size, 0); ihdr.writeUInt32BE(size, 4);
    ihdr[8] = 8; ihdr[9] = 6; // 8-bit RGBA
    const raw = Buffer.alloc(size * (1 + size * 4));
    for (let y = 0; y < size; y++)
        for (let x = 0; x < size; x++)
            raw.set([x * 4, y * 4, 128, 255], y * (1 + size * 4) + 1 + x * 4);
    return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const out = {};
async function step(name, fn) {
    lastSent = null;
    try {
        const value = await fn();
        out[name] = { ok: true, value };
    } catch (err) {
        out[name] = { ok: false, status: err.status ?? null, message: err.message ?? String(err) };
    }
    if (lastSent) {
        out[name].contentType = lastSent.contentType;
        out[name].sentB64 = lastSent.bytes.toString('base64');
    }
}

const audio = wav();
await step('transcription', async () => {
    const r = await client.audio.transcriptions.create({
        file: await toFile(audio, 'tone.wav', { type: 'audio/wav' }), model: audioModel,
    });
    return { text: r.text, mock: r.slp_mock };
});
await step('edit', async () => {
    const r = await client.images.edit({
        image: await toFile(png(), 'gradient.png', { type: 'image/png' }), model: imageModel,
        prompt: 'a sun in the corner',
    });
    return { images: r.data.length, mock: r.slp_mock };
});
await step('unknown', async () => client.audio.transcriptions.create({
    file: await toFile(audio, 'tone.wav', { type: 'audio/wav' }), model: 'no-such-model',
}));
out.wavSha256 = (await import('node:crypto')).createHash('sha256').update(audio).digest('hex');
process.stdout.write(JSON.stringify(out) + '\n');
