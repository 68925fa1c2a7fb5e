// promptfoo's `javascript` assertion contract on top of assay's code-grader contract.
//
// assay runs: node assertion.cjs [--threshold N] [--config JSON] [--transform] -- VALUE
// (or --code-file PATH instead of -- VALUE: inline code kept in a file, relative to the
// suite, when it holds `${…}` the suite would read as a variable)
// and writes the grading context as JSON on stdin. VALUE is inline JavaScript (an expression,
// or a function body when it spans several lines) or `file:///abs/path.js[:function]`. The
// code gets promptfoo's `output` and `context` ({prompt, vars, test, config, providerResponse})
// and may answer a boolean, a number or a GradingResult {pass, score, reason}. The verdict is
// promptfoo's (a number passes when > 0, or >= the threshold when one is set) and is printed as
// an assay reply: {"score": 1 or 0, "reasoning": ...}. With --transform, the code is an output
// transform instead and its result is printed as {"output": value}.
'use strict';

const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

function parseArgs(argv) {
  const options = { threshold: undefined, config: undefined, transform: false, value: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--threshold') options.threshold = Number(argv[++i]);
    else if (arg === '--config') options.config = JSON.parse(argv[++i]);
    else if (arg === '--transform') options.transform = true;
    else if (arg === '--code-file') options.value = fs.readFileSync(argv[++i], 'utf8');
    else if (arg === '--') {
      options.value = argv.slice(i + 1).join(' ');
      break;
    } else throw new Error(`unknown argument ${arg}`);
  }
  if (typeof options.value !== 'string') throw new Error('no assertion value after --');
  return options;
}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

// The output as promptfoo's OpenAI provider gives it: the text, or the tool calls when the
// model answered only with tool calls.
function promptfooOutput(ctx) {
  const calls = Array.isArray(ctx.tool_calls) ? ctx.tool_calls : [];
  if (!ctx.output && calls.length > 0) {
    return calls.map((call, i) => ({
      id: `call_${i}`,
      type: 'function',
      function: { name: call.tool, arguments: JSON.stringify(call.args || {}) },
    }));
  }
  return ctx.output;
}

function promptText(input) {
  if (typeof input === 'string') return input;
  return input === null || input === undefined ? '' : JSON.stringify(input);
}

function buildContext(ctx, config) {
  const metadata = ctx.metadata || {};
  const vars = metadata.vars && typeof metadata.vars === 'object' ? metadata.vars : {};
  const target = ctx.target_output || {};
  const context = {
    prompt: promptText(ctx.input),
    vars,
    test: { vars, metadata, ...(ctx.expected_output !== null ? { expected: ctx.expected_output } : {}) },
    providerResponse: { output: promptfooOutput(ctx), tokenUsage: target.token_usage || undefined },
    logProbs: undefined,
  };
  if (config !== undefined) context.config = config;
  return context;
}

// The last top-level `;` of a one-line assertion that starts with a declaration, so that
// `const s = output.length; s > 3` becomes `const s = output.length; return s > 3`.
function lastStatementSemicolon(code) {
  let depth = 0;
  let quote = null;
  let last = -1;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (ch === ';' && depth === 0) last = i;
  }
  return last;
}

function functionBody(value) {
  const code = value.trimEnd();
  if (code.includes('\n')) return code;
  const trimmed = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(trimmed)) {
    const semi = lastStatementSemicolon(trimmed);
    if (semi !== -1 && trimmed.slice(semi + 1).trim()) {
      return `${trimmed.slice(0, semi + 1)} return ${trimmed.slice(semi + 1).trim()}`;
    }
    return trimmed;
  }
  return `return ${trimmed}`;
}

// `file:///path/x.js:name`: promptfoo splits at the last colon only when what precedes it
// is a script file, so a directory name with a colon stays part of the path.
function splitReference(reference) {
  const spec = reference.slice('file://'.length);
  const colon = spec.lastIndexOf(':');
  if (colon > 1 && /\.(c|m)?(j|t)s$|\.py$/.test(spec.slice(0, colon))) {
    return [spec.slice(0, colon), spec.slice(colon + 1)];
  }
  return [spec, undefined];
}

async function loadFunction(reference) {
  const [file, name] = splitReference(reference);
  const resolved = path.resolve(file);
  const mod = /\.mjs$/.test(resolved)
    ? await import(pathToFileURL(resolved).href)
    : require(resolved);
  let fn;
  if (name && Object.prototype.hasOwnProperty.call(mod, name)) fn = mod[name];
  else if (typeof mod === 'function') fn = mod;
  else if (mod && typeof mod.default === 'function') fn = mod.default;
  if (typeof fn !== 'function') {
    throw new Error(`${file} does not export ${name ? `a function '${name}'` : 'a function'}`);
  }
  return fn;
}

function isGradingResult(value) {
  return value !== null && typeof value === 'object' && typeof value.pass === 'boolean';
}

function verdict(result, threshold) {
  if (typeof result === 'boolean') {
    return { pass: result, reasoning: `returned ${result}` };
  }
  if (typeof result === 'number' && Number.isFinite(result)) {
    const pass = threshold === undefined ? result > 0 : result >= threshold;
    const rule = threshold === undefined ? 'passes above 0' : `threshold ${threshold}`;
    return { pass, reasoning: `returned score ${result} (${rule})` };
  }
  if (isGradingResult(result)) {
    const score = result.score === undefined ? '' : ` with score ${result.score}`;
    const reason = result.reason ? `: ${result.reason}` : '';
    return { pass: result.pass, reasoning: `returned pass ${result.pass}${score}${reason}` };
  }
  throw new Error(
    'the assertion must return a boolean, a finite number or a GradingResult {pass, score, reason}; ' +
      `got ${result === null ? 'null' : typeof result}`,
  );
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const ctx = JSON.parse(await readStdin());
  const metadata = ctx.metadata || {};
  // inside an assay `transform` grader, the transformed value itself (an object stays one)
  const output = 'transformed_output' in metadata ? metadata.transformed_output : promptfooOutput(ctx);
  const context = options.transform
    ? { vars: buildContext(ctx).vars, prompt: { label: metadata.prompt }, metadata }
    : buildContext(ctx, options.config);
  let result;
  if (options.value.startsWith('file://')) {
    result = await (await loadFunction(options.value))(output, context);
  } else if (options.transform) {
    // an inline transform is an expression, or a function body when it spans several lines
    const body = options.value.includes('\n') ? options.value : `return ${options.value}`;
    result = await new Function('output', 'context', 'process', body)(output, context, process);
  } else {
    const body = functionBody(options.value);
    result = await new Function('output', 'context', 'process', body)(output, context, process);
  }
  if (options.transform) {
    if (result === null || result === undefined) {
      throw new Error('the transform did not return a value');
    }
    process.stdout.write(JSON.stringify({ output: result }));
    return;
  }
  const { pass, reasoning } = verdict(result, options.threshold);
  process.stdout.write(JSON.stringify({ score: pass ? 1 : 0, reasoning }));
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
