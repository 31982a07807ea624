// Datasets for the TOON text benchmarks: the line-by-line twin of bench/toon_datasets.py (read its
// docstring for the shapes and for how the two stay identical). `node bench/toon_datasets.mjs`
// prints the same SHA-256 digests as `python bench/toon_datasets.py`.

import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';

export const SEED = 12345;

/** mulberry32; draws integers as lo + floor(u32 * span / 2**32), exact for span <= 2**21. */
export class Rng {
  constructor(seed) {
    this.state = seed >>> 0;
  }

  u32() {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    const a = this.state;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  }

  int(lo, hi) {
    const span = hi - lo + 1;
    if (!(span > 0 && span <= 2 ** 21)) throw new Error('span too large to be exact in doubles');
    return lo + Math.floor((this.u32() * span) / 4294967296);
  }

  pick(items) {
    return items[this.int(0, items.length - 1)];
  }

  chance(percent) {
    return this.int(0, 99) < percent;
  }

  alnum(n) {
    let s = '';
    for (let i = 0; i < n; i++) s += this.pick(ALNUM);
    return s;
  }

  digits(n) {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

const FIRST = ['Ada', 'Bruno', 'Chloe', 'Dmitri', 'Elena', 'Farah', 'Gustavo', 'Hana', 'Ivan', 'Jasmine', 'Kenji',
  'Lena', 'Mateo', 'Nadia', 'Oscar', 'Priya', 'Quentin', 'Rosa', 'Samuel', 'Tamara', 'Umar', 'Vera',
  'Wei', 'Ximena', 'Yusuf', 'Zoe'];
const LAST = ['Anderson', 'Brown', 'Castillo', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Haddad', 'Ito', 'Jensen',
  'Kowalski', 'Lopez', 'Moreau', 'Nakamura', "O'Brien", 'Petrov', 'Quinn', 'Rossi', 'Schmidt', 'Tanaka',
  'Umarov', 'Varga', 'Williams', 'Xu', 'Yilmaz', 'Zimmermann'];
const DOMAINS = ['example.com', 'mail.test', 'shop.example', 'inbox.dev', 'corp.example.org'];
const PRODUCT_NAMES = ['Wireless Mouse', 'USB Cable', 'Laptop Stand', 'Keyboard', 'Webcam', 'Headphones', 'Monitor',
  'Desk Lamp'];
const ORDER_STATUSES = ['pending', 'processing', 'shipped', 'delivered', 'cancelled'];
const WORDS = ['fast', 'simple', 'open', 'source', 'framework', 'library', 'toolkit', 'for', 'building', 'modern', 'web',
  'applications', 'with', 'a', 'focus', 'on', 'performance', 'and', 'developer', 'experience', 'the',
  'command-line', 'tool', 'that', 'helps', 'you', 'manage', 'data', 'pipelines', 'across', 'clouds',
  'plugins', 'themes', 'curated', 'list', 'of', 'awesome', 'resources', 'tutorials', 'machine', 'learning',
  'models', 'in', 'Python', 'Rust', 'TypeScript', 'Go', 'small', 'binary', 'zero', 'dependencies',
  'self-hosted', 'platform', 'agents', 'workflows', 'native', 'integrations', 'cross-platform', 'editor',
  'terminal', 'database', 'engine', 'real-time', 'collaboration', 'secure', 'by', 'default', 'batteries',
  'included', 'documentation', 'examples', 'community', 'driven', 'plugin', 'system', 'configuration'];
const EMOJI = ['\u{1f680}', '\u{1f4dd}', '\u{1f60e}', '\u{1f99e}', '\u{1f393}', '\u2728'];
const CJK = ['技术面试必备基础知识', '从新手到大师', '计算机网络、系统设计', '日本語のドキュメント'];
const OWNERS = ['acme', 'openlabs', 'nebula-dev', 'quartzio', 'tinyworks', 'northwind', 'bluefin', 'hexagon-oss'];
const REPO_WORDS = ['awesome', 'build', 'your', 'own', 'x', 'engine', 'kit', 'cli', 'db', 'flow', 'agent', 'roadmap',
  'primer', 'lab', 'stack', 'core', 'hub', 'js', 'py', 'rs'];
const BRANCHES = ['main', 'master', 'main', 'dev', 'trunk'];

const money = (cents) => cents / 100;
const isoDate = (days) => new Date(days * 86400000).toISOString().slice(0, 10);
const isoSeconds = (sec) => new Date(sec * 1000).toISOString().slice(0, 19) + 'Z';

function person(rng) {
  const first = rng.pick(FIRST);
  const last = rng.pick(LAST);
  const email = `${first}.${last}${rng.int(1, 99)}@${rng.pick(DOMAINS)}`.toLowerCase().replaceAll("'", '');
  return [`${first} ${last}`, email];
}

function phone(rng) {
  const kind = rng.int(0, 3);
  const a = rng.digits(3);
  const b = rng.digits(3);
  const c = rng.digits(4);
  if (kind === 0) return `(${a}) ${b}-${c}`;
  if (kind === 1) return `${a}-${b}-${c}`;
  if (kind === 2) return `${a}.${b}.${c}`;
  return `+1-${a}-${b}-${c} x${rng.digits(3)}`;
}

const DAY_2025_06_01 = 20240;

export function orders(rng, count = 500) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const itemCount = rng.int(1, 4);
    const items = [];
    let subtotalCents = 0;
    for (let j = 0; j < itemCount; j++) {
      const priceCents = rng.int(999, 19999);
      const quantity = rng.int(1, 5);
      subtotalCents += priceCents * quantity;
      items.push({
        sku: 'SKU-' + rng.alnum(6),
        name: PRODUCT_NAMES[j % PRODUCT_NAMES.length],
        quantity,
        price: money(priceCents),
      });
    }
    const taxCents = Math.floor((subtotalCents * 8 + 50) / 100);
    const [name, email] = person(rng);
    out.push({
      orderId: `ORD-${String(i + 1).padStart(4, '0')}`,
      customer: { id: (i % 20) + 1, name, email, phone: phone(rng) },
      items,
      subtotal: money(subtotalCents),
      tax: money(taxCents),
      total: money(subtotalCents + taxCents),
      status: ORDER_STATUSES[i % ORDER_STATUSES.length],
      orderDate: isoDate(DAY_2025_06_01 - rng.int(1, 90)),
    });
  }
  return { orders: out };
}

const DAY_2020_01_01 = 18262;

export function analytics(rng, days = 2000) {
  const rows = [];
  for (let i = 0; i < days; i++) {
    const day = DAY_2020_01_01 + i;
    const weekday = (day + 4) % 7;
    const views = (weekday === 0 || weekday === 6 ? 3500 : 5000) + rng.int(-1000, 3000);
    const clicks = Math.floor((views * rng.int(20, 80)) / 1000);
    const conversions = Math.floor((clicks * rng.int(50, 150)) / 1000);
    const revenue = money(conversions * rng.int(4999, 29999));
    rows.push({
      date: isoDate(day),
      views,
      clicks,
      conversions,
      revenue,
      bounceRate: money(rng.int(30, 70)),
    });
  }
  return { metrics: rows };
}

function sentence(rng) {
  const n = rng.int(6, 18);
  const words = [];
  for (let k = 0; k < n; k++) {
    let w = rng.pick(WORDS);
    if (k === 0) w = w[0].toUpperCase() + w.slice(1);
    if (k < n - 1 && rng.chance(8)) w += ',';
    words.push(w);
  }
  return words.join(' ') + '.';
}

function description(rng) {
  const parts = [];
  if (rng.chance(15)) parts.push(rng.pick(EMOJI));
  const n = rng.int(1, 4);
  for (let i = 0; i < n; i++) parts.push(sentence(rng));
  if (rng.chance(20)) {
    // Arguments in the order Python's f-string evaluates them.
    const a = rng.pick(WORDS);
    const b = rng.pick(WORDS);
    const c = rng.int(2, 400);
    const d = rng.pick(WORDS);
    parts.push(`Includes: ${a}, ${b} and ${c}+ ${d}.`);
  }
  if (rng.chance(10)) {
    const a = rng.pick(REPO_WORDS);
    const b = rng.pick(REPO_WORDS);
    parts.push(`Also known as "${a}-${b}".`);
  }
  if (rng.chance(8)) parts.push(rng.pick(CJK));
  if (rng.chance(8)) parts.push(`Docs: https://${rng.pick(REPO_WORDS)}.example.dev/guide`);
  return parts.join(' ');
}

const SEC_2009_01_01 = 1230768000;
const SEC_2026_07_23 = 1784764800;

export function repos(rng, count = 100) {
  const out = [];
  for (let r = 0; r < count; r++) {
    const nw = rng.int(1, 3);
    const ws = [];
    for (let k = 0; k < nw; k++) ws.push(rng.pick(REPO_WORDS));
    const name = ws.join('-');
    const created = SEC_2009_01_01 + rng.int(0, 6000) * 86400 + rng.int(0, 86399);
    const updated = SEC_2026_07_23 + rng.int(0, 68399);
    const pushed = Math.max(created, updated - rng.int(0, 700) * 86400 - rng.int(0, 86399));
    const id = rng.int(1, 1199) * 1000000 + rng.int(0, 999999);
    const repo = `${rng.pick(OWNERS)}/${name}`;
    out.push({
      id,
      name,
      repo,
      description: description(rng),
      createdAt: isoSeconds(created),
      updatedAt: isoSeconds(updated),
      pushedAt: isoSeconds(pushed),
      stars: rng.int(10000, 530000),
      watchers: rng.int(200, 10000),
      forks: rng.int(1000, 110000),
      defaultBranch: rng.pick(BRANCHES),
    });
  }
  return { repositories: out };
}

function uuid(rng) {
  let h = '';
  for (let i = 0; i < 32; i++) h += '0123456789abcdef'[rng.int(0, 15)];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}

const url = (rng) => `https://${rng.pick(REPO_WORDS)}.${rng.pick(DOMAINS)}/${rng.pick(REPO_WORDS)}`;
const email = (rng) => person(rng)[1];
const times = (n, f) => Array.from({ length: n }, (_, i) => f(i));

// Object literals below are written in the order Python evaluates the twin's dict displays
// (values left to right, depth first), so the PRNG draws happen in the same order.
export function config(rng) {
  const features = {};
  for (const name of ['darkMode', 'analytics', 'betaSearch', 'newCheckout', 'aiAssist', 'offlineSync']) {
    const variants = [];
    const nv = rng.int(1, 3);
    for (let v = 0; v < nv; v++) {
      variants.push({
        name: ['default', 'minimal', 'full'][v],
        weight: [70, 20, 10][v],
        config: { theme: rng.pick(['dark', 'light', 'auto']), animations: rng.chance(50), sampling: money(rng.int(1, 100)) },
      });
    }
    features[name] = { enabled: rng.chance(50), rollout: rng.int(0, 100), variants };
  }
  return {
    environment: rng.pick(['production', 'staging', 'development']),
    version: `${rng.int(0, 9)}.${rng.int(0, 30)}.${rng.int(0, 99)}`,
    database: {
      host: `db.${rng.pick(DOMAINS)}`,
      port: 5432,
      name: rng.pick(['postgres', 'mysql', 'mariadb']),
      pool: { min: 2, max: rng.int(10, 50), idleTimeout: 30000 },
      replicas: times(3, (i) => ({ host: `replica-${i + 1}.${rng.pick(DOMAINS)}`, port: 5432, priority: i + 1 })),
    },
    features,
    authentication: {
      providers: [
        { name: 'oauth2', clientId: uuid(rng), scopes: ['read', 'write', 'admin'],
          config: { authUrl: url(rng), tokenUrl: url(rng) } },
        { name: 'saml', clientId: uuid(rng), scopes: ['read'],
          config: { entryPoint: url(rng), cert: rng.alnum(64) } },
      ],
      session: { secret: rng.alnum(32), duration: 86400, refreshThreshold: 3600 },
    },
    permissions: {
      roles: {
        admin: { permissions: ['read', 'write', 'delete', 'manage_users', 'manage_roles'], inherits: [] },
        editor: { permissions: ['read', 'write'], inherits: ['viewer'] },
        viewer: { permissions: ['read'], inherits: [] },
      },
      groups: {
        engineering: { members: times(5, () => email(rng)), roles: ['admin', 'editor'] },
        support: { members: times(3, () => email(rng)), roles: ['viewer'] },
      },
    },
    observability: {
      tracing: {
        exporters: {
          otlp: {
            endpoint: url(rng),
            headers: { 'x-api-key': rng.alnum(24), 'x-tenant': rng.pick(OWNERS) },
            retry: { initialMs: 100, maxMs: rng.int(1000, 9000), multiplier: 1.5,
              jitter: { enabled: true, ratio: money(rng.int(5, 50)) } },
          },
          console: { enabled: false, options: {} },
        },
        sampler: { type: 'parentbased_traceidratio', ratio: money(rng.int(1, 100)) },
      },
      metrics: { interval: 15, labels: { region: rng.pick(['eu-west-1', 'us-east-1']), tier: 'gold' } },
    },
  };
}

export const DATASETS = { orders, analytics, repos, config };

export const DESCRIPTIONS = {
  orders: '500 e-commerce orders: nested customer, 1-4 line items',
  analytics: '2,000 flat analytics rows (tabular)',
  repos: '100 repositories, long free-text descriptions',
  config: 'one deeply nested config object',
};

/** Every dataset, each from its own PRNG seeded with seed + its index. */
export function buildAll(seed = SEED) {
  const out = {};
  Object.entries(DATASETS).forEach(([name, fn], i) => {
    out[name] = fn(new Rng(seed + i));
  });
  return out;
}

export const digest = (value) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const data = buildAll();
  const dir = process.argv[2];
  if (dir) fs.mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(data)) {
    const json = JSON.stringify(value);
    if (dir) fs.writeFileSync(path.join(dir, `${name}.json`), json);
    console.log(`${name}: ${Buffer.byteLength(json)} B JSON, sha256 ${digest(value)}`);
  }
}
