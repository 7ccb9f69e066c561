// `cargo xtask dist` runs this after building the wasm: it turns the source
// tree (index.html, www/ with its built modules: www/pkg/, www/pkg-full/,
// www/pkg-bench/) into dist/, a static site
// that needs nothing from its server but files.
//
//   node xtask/tools/dist.mjs <repository root> <out dir>
//
// What comes out, and the one mechanism that joins the files (every
// `new URL('<relative path>', import.meta.url)` is built first, then
// rewritten to the built name; any other is a build error): docs/hosting.md,
// "How the build joins the files". Every URL stays relative.

import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const [rootArg, outArg] = process.argv.slice(2);
if (!rootArg || !outArg) {
  console.error('usage: node dist.mjs <repository root> <out dir>');
  process.exit(2);
}
const ROOT = resolve(rootArg);
// Its real path: the bundler names files by theirs, and www/ may be a link.
const WWW = realpathSync(join(ROOT, 'www'));
const OUT = resolve(outArg);
const ASSETS = 'assets';

/** The Content-Security-Policy, the same as `cargo xtask serve` sends (serve.rs). */
const CSP = process.env.INBOX_LAB_CSP;
if (!CSP) {
  console.error('INBOX_LAB_CSP is not set (cargo xtask dist passes serve.rs\'s policy)');
  process.exit(2);
}

/** The files a worker or the page loads by URL: source path → built name. */
const built = new Map();
/** Every file written under assets/, in order: what the service worker caches. */
const assets = [];

function hashOf(bytes) {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}

async function emit(name, ext, bytes) {
  const file = `${name}-${hashOf(bytes)}.${ext}`;
  await writeFile(join(OUT, ASSETS, file), bytes);
  assets.push(`${ASSETS}/${file}`);
  return file;
}

// `new URL('x', import.meta.url)` with a plain string literal.
const ASSET_URL = /new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;

/** Rewrites each asset URL of a source file to its built name (all built files share assets/). */
const assetUrls = {
  name: 'asset-urls',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const errors = [];
      // Line by line, so that a comment showing the pattern is left alone.
      const contents = source.split('\n').map((line) => /^\s*(\/\/|\*)/.test(line) ? line : line.replace(ASSET_URL, (whole, quote, path) => {
        const target = resolve(dirname(args.path), path);
        const name = built.get(target);
        if (name === undefined) {
          errors.push({ text: `new URL(${quote}${path}${quote}, import.meta.url) names ${relative(ROOT, target)}, which the dist build does not produce` });
          return whole;
        }
        return `new URL(${quote}./${name}${quote}, import.meta.url)`;
      })).join('\n');
      return { contents, loader: 'js', errors };
    });
  },
};

/** Where the page's npm packages are: beside this script. */
const NODE_MODULES = fileURLToPath(new URL('node_modules', import.meta.url));

const BUNDLE_OPTIONS = {
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
  plugins: [assetUrls],
  // The page's npm packages (CodeMirror, for the SQL console) are installed
  // with the build's tools, beside this script (`cargo xtask setup`: npm ci
  // in xtask/tools), whatever root is built.
  nodePaths: [NODE_MODULES],
};

// The page, or a worker: one bundle, split where it imports a module lazily
// (`import('./x.js')`): that module and what only it needs become a chunk of
// their own, fetched when first used (the SQL console's editor with
// CodeMirror: www/panels/console/editor.js; the database worker's full
// module: www/db/worker.js, `handOver`). Each chunk is written as esbuild
// names it, <name>-<hash of its content>.js, beside the bundle that imports
// it by that relative name. The npm packages bundled (MIT: their notices must
// travel with them) get their licence texts in one file,
// assets/licenses-<hash>.txt, which each chunk holding them names in its
// first line. Returns the entry bundle's bytes.
async function bundle(entry) {
  const result = await esbuild.build({
    ...BUNDLE_OPTIONS,
    entryPoints: [entry],
    splitting: true,
    outdir: join(OUT, ASSETS),
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    metafile: true,
  });
  const bundled = Object.values(result.metafile.outputs).some((output) => packagesIn(output).length > 0);
  const licenses = bundled ? await emit('licenses', 'txt', new TextEncoder().encode(await licenceTexts(result.metafile))) : null;
  let page = null;
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    const packages = packagesIn(result.metafile.outputs[relative(process.cwd(), file.path)])
      .map((name) => `${name}@${packageJson(name).version}`);
    const notice = packages.length === 0 ? '' : `/*! ${packages.join(', ')}: MIT; licences in ${licenses} */\n`;
    const bytes = Buffer.concat([Buffer.from(notice), file.contents]);
    if (name === basename(entry)) {
      page = bytes;
    } else {
      await writeFile(join(OUT, ASSETS, name), bytes);
      // Two bundles may share a chunk (esbuild's helpers): the same name, the same bytes, cached once.
      if (!assets.includes(`${ASSETS}/${name}`)) {
        assets.push(`${ASSETS}/${name}`);
      }
    }
  }
  return page;
}

// The npm packages whose code is in an output (its metafile entry), by name.
function packagesIn(output) {
  const names = new Set();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match && bytesInOutput > 0) {
      names.add(match[1]);
    }
  }
  return [...names].sort();
}

function packageJson(name) {
  return JSON.parse(readFileSync(join(NODE_MODULES, name, 'package.json'), 'utf8'));
}

// Every bundled package's licence: its name, version, licence and LICENSE file.
async function licenceTexts(metafile) {
  const packages = new Set(Object.values(metafile.outputs).flatMap(packagesIn));
  const parts = ['Third-party code in this build of inbox-lab, bundled from npm by xtask/tools/dist.mjs.\n'];
  for (const name of [...packages].sort()) {
    const { version, license } = packageJson(name);
    if (license !== 'MIT') {
      throw new Error(`${name}: licence ${license}, not MIT: check it may be shipped, then teach dist.mjs its notice`);
    }
    const text = await readFile(join(NODE_MODULES, name, 'LICENSE'), 'utf8');
    parts.push(`${'='.repeat(72)}\n${name}@${version} (${license})\n\n${text.trim()}\n`);
  }
  return parts.join('\n');
}

async function main() {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(join(OUT, ASSETS), { recursive: true });

  // 1. The wasm modules, as they are.
  for (const [source, name] of [
    ['pkg/inbox_lab_bg.wasm', 'inbox_lab'],
    ['pkg-full/inbox_lab_bg.wasm', 'inbox_lab_full'],
    ['pkg-bench/inbox_lab_bg.wasm', 'inbox_lab_bench'],
  ]) {
    const path = join(WWW, source);
    built.set(path, await emit(name, 'wasm', await readFile(path)));
  }

  // 2. The workers (each new Worker(...) of the page), then 3. the page, which names them.
  // (The database worker's foreign-work worker first: the database worker names it.)
  for (const source of ['db/guest.js', 'db/worker.js', 'panels/crash-lab/crashworker.js', 'panels/bench/benchworker.js']) {
    const path = join(WWW, source);
    built.set(path, await emit(basename(source, '.js'), 'js', await bundle(path)));
  }
  const app = await emit('app', 'js', await bundle(join(WWW, 'app.js')));

  // 4. One stylesheet.
  const css = await esbuild.build({
    entryPoints: [join(WWW, 'style.css')],
    bundle: true,
    minify: true,
    write: false,
    logLevel: 'warning',
  });
  const style = await emit('style', 'css', css.outputFiles[0].contents);

  // The build's version: a hash of every asset's name (so of all their bytes) and the markup.
  const html = await readFile(join(ROOT, 'index.html'), 'utf8');
  const version = hashOf(assets.join('\n') + html);

  // 5. index.html.
  const pageWasm = built.get(join(WWW, 'pkg/inbox_lab_bg.wasm'));
  // A <meta> policy cannot say frame-ancestors (browsers ignore it there, with a console
  // error): that one travels only in _headers, for hosts that send headers.
  const metaCsp = CSP.split(';').map((d) => d.trim()).filter((d) => d && !d.startsWith('frame-ancestors')).join('; ');
  const [cspMeta, ...head] = [
    `<meta http-equiv="Content-Security-Policy" content="${metaCsp}">`,
    `<meta name="inbox-lab-version" content="${version}">`,
    `<meta name="inbox-lab-service-worker" content="sw.js">`,
    `<link rel="stylesheet" href="${ASSETS}/${style}">`,
    `<link rel="modulepreload" href="${ASSETS}/${app}">`,
    `<link rel="preload" href="${ASSETS}/${pageWasm}" as="fetch" type="application/wasm" crossorigin>`,
    `<script type="module" src="${ASSETS}/${app}"></script>`,
  ];
  const entry = /\s*<link rel="stylesheet" href="www\/style.css">\s*<script type="module" src="www\/app.js"><\/script>/;
  if (!entry.test(html)) {
    throw new Error('index.html: expected the stylesheet link www/style.css followed by the entry module www/app.js');
  }
  const page = html
    .replace(/<meta charset="utf-8">/, (m) => `${m}\n  ${cspMeta}`)
    .replace(entry, `\n  ${head.join('\n  ')}`);
  await writeFile(join(OUT, 'index.html'), page);

  // 6. The service worker: the source with the version and the files filled in.
  const sw = await readFile(join(WWW, 'sw.js'), 'utf8');
  const files = ['./', ...assets];
  const filled = sw
    .replace(/^const VERSION = .*;$/m, `const VERSION = ${JSON.stringify(version)};`)
    .replace(/^const FILES = .*;$/m, `const FILES = ${JSON.stringify(files)};`);
  if (filled === sw || !filled.includes(version) || !filled.includes(JSON.stringify(files))) {
    throw new Error('www/sw.js: expected the lines `const VERSION = ...;` and `const FILES = ...;` to fill in');
  }
  await writeFile(join(OUT, 'sw.js'), filled);

  // 7. What a static host has no relay for, and headers for hosts that read _headers.
  await writeFile(join(OUT, 'relay.json'), '{"relay": false}\n');
  const headers = [
    '/*', `  Content-Security-Policy: ${CSP}`, '  X-Content-Type-Options: nosniff', '  Referrer-Policy: no-referrer',
    ...['/', '/index.html', '/sw.js', '/relay.json'].flatMap((path) => [path, '  Cache-Control: no-cache']),
    `/${ASSETS}/*`, '  Cache-Control: public, max-age=31536000, immutable', '',
  ];
  await writeFile(join(OUT, '_headers'), headers.join('\n'));

  console.log(JSON.stringify({ version, files: ['index.html', 'sw.js', 'relay.json', '_headers', ...assets] }));
}

main().catch((error) => {
  console.error(`dist: ${error.message ?? error}`);
  process.exit(1);
});
