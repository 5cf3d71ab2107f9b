// Drives slp through the real `openai` npm client and prints one JSON object with what each
// call returned; tests/integration/tst_openai_client.cpp asserts on it.
// usage: node openai_client.mjs BASE_URL
import OpenAI from 'openai';

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 20000 });
const out = {};

async function step(name, fn) {
    try {
        out[name] = { ok: true, value: await fn() };
    } catch (err) {
        out[name] = {
            ok: false,
            status: err.status ?? null,
            message: err.message ?? String(err),
            code: err.code ?? null,
            type: err.type ?? null,
            requestId: err.headers?.get?.('x-request-id') ?? null,
        };
    }
}

await step('models', async () => {
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    return ids;
});
// Every entry whole, as the client parses it (what agent clients size prompts from), and the
// same through models.retrieve(id).
await step('entries', async () => {
    const entries = {};
    for await (const m of client.models.list()) entries[m.id] = m;
    return entries;
});
await step('retrieved', async () => {
    const entries = {};
    for await (const m of client.models.list()) entries[m.id] = await client.models.retrieve(m.id);
    return entries;
});
await step('chat', async () => {
    const r = await client.chat.completions.create({
        model: 'qwen', messages: [{ role: 'user', content: 'Hello' }],
    });
    return { model: r.model, content: r.choices[0].message.content, usage: r.usage };
});
// A streamed chat, read the way an application reads it.
async function streamChat(model, headers) {
    const stream = await client.chat.completions.create({
        model, stream: true, messages: [{ role: 'user', content: 'Hello' }],
    }, { headers });
    let content = '';
    let reasoning = '';
    let chunks = 0;
    let usage = null;
    let finish = null;
    for await (const chunk of stream) {
        chunks++;
        const choice = chunk.choices[0];
        if (choice?.delta?.content) content += choice.delta.content;
        if (choice?.delta?.reasoning_content) reasoning += choice.delta.reasoning_content;
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage) usage = chunk.usage;
    }
    return { chunks, content, reasoning, usage, finish };
}

await step('stream', async () => streamChat('qwen'));
// The same stream with a 1.2 s silence between events, through a route with sse_keepalive
// (": keep-alive" comments fill the silence) and through one without, for comparison.
const paused = { 'X-Mock-Pause-After': '3', 'X-Mock-Pause-Ms': '1200' };
await step('keepalive', async () => streamChat('qwen-keep', paused));
await step('keepaliveReference', async () => streamChat('qwen', paused));
await step('embeddings', async () => {
    const r = await client.embeddings.create({ model: 'qwen', input: 'hello' });
    return { count: r.data.length, dims: r.data[0].embedding.length };
});
await step('unknown', async () => client.chat.completions.create({
    model: 'no-such-model', messages: [{ role: 'user', content: 'x' }],
}));
await step('down', async () => client.chat.completions.create({
    model: 'down', messages: [{ role: 'user', content: 'x' }],
}));

process.stdout.write(JSON.stringify(out) + '\n');
