// The official OpenAI JS SDK against a real `nexttok serve` (run by scripts/sdk_test.sh):
// starts the server on a free port, checks response shapes and values through the SDK's own
// types and error classes, then stops it with SIGTERM and expects exit code 0.
// Env: NEXTTOK_BIN (default build/nexttok), NEXTTOK_MODEL (default
// ../shared/models/stories15M-q8_0.gguf); defaults are relative to the repository root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = process.env.NEXTTOK_BIN
  ? path.resolve(process.env.NEXTTOK_BIN)
  : path.join(ROOT, 'build/nexttok');
const MODEL = process.env.NEXTTOK_MODEL
  ? path.resolve(process.env.NEXTTOK_MODEL)
  : path.resolve(ROOT, '../shared/models/stories15M-q8_0.gguf');
const API_KEY = 'test-key';
const PROMPT = 'Once upon a time';
const TEST_TIMEOUT_MS = 30_000;

let server = null;      // the child process
let serverLog = '';     // its stderr, shown when something goes wrong
let serverExit = null;  // resolves to {code, signal} when it exits
let port = 0;
let client = null;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Rejects after `ms` with `what` and the server's log, so a hang fails with a reason.
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms\n--- server stderr ---\n${serverLog}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function startServer() {
  const args = ['serve', '-m', MODEL, '--port', '0', '-c', '4096', '-np', '4', '--api-key', API_KEY];
  server = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  serverExit = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
  const portFound = new Promise((resolve, reject) => {
    server.on('error', (e) => reject(new Error(`cannot start ${BIN}: ${e.message}`)));
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      serverLog += chunk;
      const m = /serve: listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(serverLog);
      if (m) resolve(Number(m[1]));
    });
    serverExit.then(({ code, signal }) =>
      reject(new Error(`server exited early (code ${code}, signal ${signal})\n${serverLog}`)));
  });
  return within(30_000, 'waiting for "serve: listening on"', portFound);
}

async function waitHealthy(deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (e) {
      last = e.message;
    }
    await sleep(50);
  }
  throw new Error(`/health not 200 within ${deadlineMs} ms (last: ${last})\n${serverLog}`);
}

function killServer() {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
}

before(async () => {
  // If the runner is interrupted, do not leave the server behind.
  process.on('exit', killServer);
  port = await startServer();
  await waitHealthy(30_000);
  client = new OpenAI({
    baseURL: `http://127.0.0.1:${port}/v1`,
    apiKey: API_KEY,
    timeout: 20_000,
    maxRetries: 0,
  });
}, { timeout: 70_000 });

after(killServer);

// Bounded test: node:test fails it at the timeout, and the SDK's own timeout ends its requests.
function t(name, fn) {
  test(name, { timeout: TEST_TIMEOUT_MS }, fn);
}

const chatRequest = (extra) => ({
  model: 'stories15M',
  messages: [{ role: 'user', content: PROMPT }],
  temperature: 0,
  ...extra,
});

const completionRequest = (extra) => ({
  model: 'stories15M',
  prompt: PROMPT,
  temperature: 0,
  ...extra,
});

function assertUsage(usage) {
  assert.equal(typeof usage.prompt_tokens, 'number');
  assert.equal(typeof usage.completion_tokens, 'number');
  assert.ok(usage.prompt_tokens > 0, `prompt_tokens ${usage.prompt_tokens}`);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.equal(typeof usage.prompt_tokens_details?.cached_tokens, 'number');
  assert.ok(usage.prompt_tokens_details.cached_tokens >= 0);
  assert.ok(usage.prompt_tokens_details.cached_tokens <= usage.prompt_tokens);
}

t('models.list names the served model', async () => {
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0].object, 'model');
  assert.equal(typeof page.data[0].id, 'string');
  assert.ok(page.data[0].id.length > 0);
});

t('chat.completions.create: whole response', async () => {
  const r = await client.chat.completions.create(chatRequest({ max_tokens: 8 }));
  assert.equal(r.object, 'chat.completion');
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(typeof r.created, 'number');
  assert.equal(typeof r.model, 'string');
  assert.equal(r.choices.length, 1);
  const c = r.choices[0];
  assert.equal(c.index, 0);
  assert.equal(c.message.role, 'assistant');
  assert.equal(typeof c.message.content, 'string');
  assert.ok(c.message.content.length > 0, 'empty content');
  assert.equal(c.finish_reason, 'length');
  assertUsage(r.usage);
  assert.equal(r.usage.completion_tokens, 8);
});

t('chat.completions.create: max_completion_tokens limits like max_tokens', async () => {
  const r = await client.chat.completions.create(chatRequest({ max_completion_tokens: 5 }));
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 5);
});

t('chat.completions.create: stream equals the whole response, then a usage chunk', async () => {
  const maxTokens = 12;
  const whole = await client.chat.completions.create(chatRequest({ max_tokens: maxTokens }));
  const stream = await client.chat.completions.create(
    chatRequest({ max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } }));
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
  const ids = new Set(chunks.map((c) => c.id));
  assert.equal(ids.size, 1, `ids differ: ${[...ids]}`);
  for (const c of chunks) assert.equal(c.object, 'chat.completion.chunk');
  const withChoices = chunks.filter((c) => c.choices.length > 0);
  assert.equal(withChoices[0].choices[0].delta.role, 'assistant');
  const text = withChoices.map((c) => c.choices[0].delta.content ?? '').join('');
  assert.equal(text, whole.choices[0].message.content);
  const finishes = withChoices.map((c) => c.choices[0].finish_reason).filter((f) => f != null);
  assert.deepEqual(finishes, ['length']);
  const last = chunks[chunks.length - 1];
  assert.deepEqual(last.choices, []);
  assertUsage(last.usage);
  assert.equal(last.usage.completion_tokens, maxTokens);
  assert.equal(last.usage.prompt_tokens, whole.usage.prompt_tokens);
  for (const c of chunks.slice(0, -1)) assert.ok(c.usage == null, 'usage before the last chunk');
});

t('completions.create: whole and streamed text are equal', async () => {
  const maxTokens = 12;
  const whole = await client.completions.create(completionRequest({ max_tokens: maxTokens }));
  assert.equal(whole.object, 'text_completion');
  assert.match(whole.id, /^cmpl-/);
  assert.equal(whole.choices.length, 1);
  assert.equal(whole.choices[0].index, 0);
  assert.equal(typeof whole.choices[0].text, 'string');
  assert.ok(whole.choices[0].text.length > 0, 'empty text');
  assert.equal(whole.choices[0].finish_reason, 'length');
  assertUsage(whole.usage);
  assert.equal(whole.usage.completion_tokens, maxTokens);

  const stream = await client.completions.create(
    completionRequest({ max_tokens: maxTokens, stream: true, stream_options: { include_usage: true } }));
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const c of chunks) assert.equal(c.object, 'text_completion');
  const text = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0].text).join('');
  assert.equal(text, whole.choices[0].text);
  const last = chunks[chunks.length - 1];
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.completion_tokens, maxTokens);
});

// A 4-character piece of `text` whose first occurrence is in its second half, and where it starts.
function pickStop(text) {
  for (let i = Math.floor(text.length / 2); i + 4 <= text.length; ++i) {
    if (text.indexOf(text.slice(i, i + 4)) === i) return { stop: text.slice(i, i + 4), at: i };
  }
  assert.fail(`no usable stop string in ${JSON.stringify(text)}`);
}

t('stop: a string from the greedy text ends it before that string', async () => {
  const greedy = (await client.completions.create(completionRequest({ max_tokens: 24 }))).choices[0].text;
  const { stop, at } = pickStop(greedy);
  const r = await client.completions.create(completionRequest({ max_tokens: 24, stop: [stop] }));
  assert.equal(r.choices[0].text, greedy.slice(0, at), `stop ${JSON.stringify(stop)}`);
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.ok(r.usage.completion_tokens < 24);

  const chatGreedy = (await client.chat.completions.create(chatRequest({ max_tokens: 24 }))).choices[0].message.content;
  const chatStop = pickStop(chatGreedy);
  const chat = await client.chat.completions.create(chatRequest({ max_tokens: 24, stop: chatStop.stop }));
  assert.equal(chat.choices[0].message.content, chatGreedy.slice(0, chatStop.at), `stop ${JSON.stringify(chatStop.stop)}`);
  assert.equal(chat.choices[0].finish_reason, 'stop');
});

t('logprobs: chat content entries with top_logprobs', async () => {
  const r = await client.chat.completions.create(
    chatRequest({ max_tokens: 6, logprobs: true, top_logprobs: 2 }));
  const content = r.choices[0].logprobs?.content;
  assert.ok(Array.isArray(content), 'logprobs.content is not an array');
  assert.equal(content.length, r.usage.completion_tokens);
  let joined = '';
  for (const e of content) {
    assert.equal(typeof e.token, 'string');
    assert.equal(typeof e.logprob, 'number');
    assert.ok(e.logprob <= 0, `logprob ${e.logprob}`);
    assert.ok(Array.isArray(e.bytes));
    for (const b of e.bytes) assert.ok(Number.isInteger(b) && b >= 0 && b <= 255, `byte ${b}`);
    assert.equal(Buffer.from(e.bytes).toString('utf8'), e.token);
    assert.equal(e.top_logprobs.length, 2);
    for (const alt of e.top_logprobs) {
      assert.equal(typeof alt.token, 'string');
      assert.ok(alt.logprob <= 0);
    }
    assert.ok(e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob, 'top_logprobs not sorted');
    // Greedy: the chosen token is the most likely one.
    assert.equal(e.top_logprobs[0].token, e.token);
    joined += e.token;
  }
  assert.equal(joined, r.choices[0].message.content);
});

t('logprobs: completions arrays of equal length', async () => {
  const r = await client.completions.create(completionRequest({ max_tokens: 6, logprobs: 2 }));
  const lp = r.choices[0].logprobs;
  const n = r.usage.completion_tokens;
  assert.equal(n, 6);
  for (const key of ['tokens', 'token_logprobs', 'top_logprobs', 'text_offset']) {
    assert.ok(Array.isArray(lp[key]), `${key} is not an array`);
    assert.equal(lp[key].length, n, key);
  }
  assert.equal(lp.tokens.join(''), r.choices[0].text);
  for (let i = 0; i < n; ++i) {
    assert.ok(lp.token_logprobs[i] <= 0);
    assert.equal(Object.keys(lp.top_logprobs[i]).length, 2);
    assert.equal(lp.top_logprobs[i][lp.tokens[i]], lp.token_logprobs[i]);
    if (i > 0) assert.equal(lp.text_offset[i], lp.text_offset[i - 1] + lp.tokens[i - 1].length);
  }
});

t('seed: same seed same text, another seed another text', async () => {
  const sample = async (seed) => (await client.completions.create(
    completionRequest({ max_tokens: 32, temperature: 1, seed }))).choices[0].text;
  const a = await sample(1234);
  const b = await sample(1234);
  const c = await sample(1235);
  assert.equal(a, b);
  assert.notEqual(a, c);
});

t('errors: wrong API key is AuthenticationError (401)', async () => {
  const bad = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'wrong-key', timeout: 20_000, maxRetries: 0 });
  await assert.rejects(bad.chat.completions.create(chatRequest({ max_tokens: 4 })), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 401);
    assert.equal(err.code, 'invalid_api_key');
    return true;
  });
});

t('errors: n = 2 is BadRequestError (400)', async () => {
  await assert.rejects(client.chat.completions.create(chatRequest({ max_tokens: 4, n: 2 })), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 400);
    assert.equal(err.param, 'n');
    return true;
  });
});

t('errors: max_tokens beyond the context is 400 naming the context size', async () => {
  const limit = (await client.models.list()).data[0].meta?.context_limit;
  assert.equal(typeof limit, 'number', 'models.list: meta.context_limit missing');
  await assert.rejects(client.completions.create(completionRequest({ max_tokens: 10 ** 9 })), (err) => {
    assert.ok(err instanceof OpenAI.BadRequestError, `${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, 400);
    assert.match(err.message, /context/);
    assert.ok(err.message.includes(String(limit)), `no ${limit} in: ${err.message}`);
    return true;
  });
});

// Last: it stops the server the other tests use (top-level tests run in order).
t('SIGTERM: the server exits 0 within 15 s', async () => {
  assert.ok(server.kill('SIGTERM'), 'SIGTERM not delivered');
  const { code, signal } = await within(15_000, 'waiting for the server to exit', serverExit);
  assert.equal(signal, null, `killed by ${signal}\n${serverLog}`);
  assert.equal(code, 0, `exit code ${code}\n${serverLog}`);
});
