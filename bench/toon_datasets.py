"""Datasets for the TOON text benchmarks, shaped like those of the official TOON benchmark.

The official benchmark (toon-format/toon, ``benchmarks/src/datasets.ts``) builds its data with
faker; this module builds data of the same shapes from a small seeded PRNG, so the same data
comes out in Python and in Node: ``bench/toon_datasets.mjs`` is a line-by-line twin of this file,
and ``python bench/toon_datasets.py`` / ``node bench/toon_datasets.mjs`` print the same SHA-256
digests of the compact JSON of every dataset (the benchmark scripts print them too).

To stay identical across the languages:

* the PRNG is mulberry32 (32-bit state; ``Math.imul`` in JS, masked products here), and integers
  are drawn as ``lo + floor(u32 * span / 2**32)`` with ``span <= 2**21``, which is exact in
  doubles;
* every number is made from integers: money is integer cents divided by 100 (a double division,
  correctly rounded in both languages), and whole amounts stay ints, as ``JSON.parse`` would
  give them;
* dates are computed from integer seconds in UTC.

Datasets (``DATASETS``: name -> builder):

* ``orders``: 500 e-commerce orders, each with a nested customer object and 1-4 line items
  (the official ``nested`` dataset, which has 50).
* ``analytics``: 2,000 flat daily metric rows (the official ``analytics`` time series, which has
  60 days): one tabular array.
* ``repos``: 100 repository records with long free-text descriptions (the official ``github``
  dataset, which uses real data): commas, colons, quotes, URLs, emoji and CJK text that TOON must
  quote or escape.
* ``config``: one deeply nested configuration object (the official ``NestedConfig``, extended to
  more features and a deeper observability subtree).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json

SEED = 12345
_M32 = 0xFFFFFFFF


class Rng:
    """mulberry32, written so that it yields the same numbers as the JS twin."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _M32

    def u32(self) -> int:
        self.state = (self.state + 0x6D2B79F5) & _M32
        a = self.state
        t = ((a ^ (a >> 15)) * (1 | a)) & _M32
        t = ((t + (((t ^ (t >> 7)) * (61 | t)) & _M32)) & _M32) ^ t
        return (t ^ (t >> 14)) & _M32

    def int(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi]."""
        span = hi - lo + 1
        assert 0 < span <= 1 << 21, "span too large to be exact in JS doubles"
        return lo + ((self.u32() * span) >> 32)

    def pick(self, items):
        return items[self.int(0, len(items) - 1)]

    def chance(self, percent: int) -> bool:
        return self.int(0, 99) < percent

    def alnum(self, n: int) -> str:
        return "".join(self.pick(_ALNUM) for _ in range(n))

    def digits(self, n: int) -> str:
        return "".join(str(self.int(0, 9)) for _ in range(n))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

FIRST = ["Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farah", "Gustavo", "Hana", "Ivan", "Jasmine", "Kenji",
         "Lena", "Mateo", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Samuel", "Tamara", "Umar", "Vera",
         "Wei", "Ximena", "Yusuf", "Zoe"]
LAST = ["Anderson", "Brown", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
        "Kowalski", "Lopez", "Moreau", "Nakamura", "O'Brien", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka",
        "Umarov", "Varga", "Williams", "Xu", "Yilmaz", "Zimmermann"]
DOMAINS = ["example.com", "mail.test", "shop.example", "inbox.dev", "corp.example.org"]
PRODUCT_NAMES = ["Wireless Mouse", "USB Cable", "Laptop Stand", "Keyboard", "Webcam", "Headphones", "Monitor",
                 "Desk Lamp"]
ORDER_STATUSES = ["pending", "processing", "shipped", "delivered", "cancelled"]
WORDS = ["fast", "simple", "open", "source", "framework", "library", "toolkit", "for", "building", "modern", "web",
         "applications", "with", "a", "focus", "on", "performance", "and", "developer", "experience", "the",
         "command-line", "tool", "that", "helps", "you", "manage", "data", "pipelines", "across", "clouds",
         "plugins", "themes", "curated", "list", "of", "awesome", "resources", "tutorials", "machine", "learning",
         "models", "in", "Python", "Rust", "TypeScript", "Go", "small", "binary", "zero", "dependencies",
         "self-hosted", "platform", "agents", "workflows", "native", "integrations", "cross-platform", "editor",
         "terminal", "database", "engine", "real-time", "collaboration", "secure", "by", "default", "batteries",
         "included", "documentation", "examples", "community", "driven", "plugin", "system", "configuration"]
EMOJI = ["\U0001f680", "\U0001f4dd", "\U0001f60e", "\U0001f99e", "\U0001f393", "\u2728"]
CJK = ["技术面试必备基础知识", "从新手到大师", "计算机网络、系统设计", "日本語のドキュメント"]
OWNERS = ["acme", "openlabs", "nebula-dev", "quartzio", "tinyworks", "northwind", "bluefin", "hexagon-oss"]
REPO_WORDS = ["awesome", "build", "your", "own", "x", "engine", "kit", "cli", "db", "flow", "agent", "roadmap",
              "primer", "lab", "stack", "core", "hub", "js", "py", "rs"]
BRANCHES = ["main", "master", "main", "dev", "trunk"]


def money(cents: int):
    """Cents as the number JSON.parse would give: an int when whole, else a float."""
    return cents // 100 if cents % 100 == 0 else cents / 100


def iso_date(days_since_epoch: int) -> str:
    return (_dt.date(1970, 1, 1) + _dt.timedelta(days=days_since_epoch)).isoformat()


def iso_seconds(seconds_since_epoch: int) -> str:
    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds_since_epoch)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _person(rng: Rng) -> tuple[str, str]:
    first = rng.pick(FIRST)
    last = rng.pick(LAST)
    email = f"{first}.{last}{rng.int(1, 99)}@{rng.pick(DOMAINS)}".lower().replace("'", "")
    return f"{first} {last}", email


def _phone(rng: Rng) -> str:
    kind = rng.int(0, 3)
    a, b, c = rng.digits(3), rng.digits(3), rng.digits(4)
    if kind == 0:
        return f"({a}) {b}-{c}"
    if kind == 1:
        return f"{a}-{b}-{c}"
    if kind == 2:
        return f"{a}.{b}.{c}"
    return f"+1-{a}-{b}-{c} x{rng.digits(3)}"


DAY_2025_06_01 = 20240  # days from 1970-01-01


def orders(rng: Rng, count: int = 500) -> dict:
    out = []
    for i in range(count):
        item_count = rng.int(1, 4)
        items = []
        subtotal_cents = 0
        for j in range(item_count):
            price_cents = rng.int(999, 19999)
            quantity = rng.int(1, 5)
            subtotal_cents += price_cents * quantity
            items.append({
                "sku": "SKU-" + rng.alnum(6),
                "name": PRODUCT_NAMES[j % len(PRODUCT_NAMES)],
                "quantity": quantity,
                "price": money(price_cents),
            })
        tax_cents = (subtotal_cents * 8 + 50) // 100
        name, email = _person(rng)
        out.append({
            "orderId": f"ORD-{i + 1:04d}",
            "customer": {"id": i % 20 + 1, "name": name, "email": email, "phone": _phone(rng)},
            "items": items,
            "subtotal": money(subtotal_cents),
            "tax": money(tax_cents),
            "total": money(subtotal_cents + tax_cents),
            "status": ORDER_STATUSES[i % len(ORDER_STATUSES)],
            "orderDate": iso_date(DAY_2025_06_01 - rng.int(1, 90)),
        })
    return {"orders": out}


DAY_2020_01_01 = 18262


def analytics(rng: Rng, days: int = 2000) -> dict:
    rows = []
    for i in range(days):
        day = DAY_2020_01_01 + i
        weekday = (day + 4) % 7  # 0 = Sunday, as JS getUTCDay(); 1970-01-01 was a Thursday
        views = (3500 if weekday in (0, 6) else 5000) + rng.int(-1000, 3000)
        clicks = views * rng.int(20, 80) // 1000
        conversions = clicks * rng.int(50, 150) // 1000
        revenue = money(conversions * rng.int(4999, 29999))
        rows.append({
            "date": iso_date(day),
            "views": views,
            "clicks": clicks,
            "conversions": conversions,
            "revenue": revenue,
            "bounceRate": money(rng.int(30, 70)),
        })
    return {"metrics": rows}


def _sentence(rng: Rng) -> str:
    n = rng.int(6, 18)
    words = []
    for k in range(n):
        w = rng.pick(WORDS)
        if k == 0:
            w = w[0].upper() + w[1:]
        if k < n - 1 and rng.chance(8):
            w += ","
        words.append(w)
    return " ".join(words) + "."


def _description(rng: Rng) -> str:
    parts = []
    if rng.chance(15):
        parts.append(rng.pick(EMOJI))
    for _ in range(rng.int(1, 4)):
        parts.append(_sentence(rng))
    if rng.chance(20):
        parts.append(f"Includes: {rng.pick(WORDS)}, {rng.pick(WORDS)} and {rng.int(2, 400)}+ {rng.pick(WORDS)}.")
    if rng.chance(10):
        parts.append(f'Also known as "{rng.pick(REPO_WORDS)}-{rng.pick(REPO_WORDS)}".')
    if rng.chance(8):
        parts.append(rng.pick(CJK))
    if rng.chance(8):
        parts.append(f"Docs: https://{rng.pick(REPO_WORDS)}.example.dev/guide")
    return " ".join(parts)


SEC_2009_01_01 = 1230768000
SEC_2026_07_23 = 1784764800


def repos(rng: Rng, count: int = 100) -> dict:
    out = []
    for _ in range(count):
        name = "-".join(rng.pick(REPO_WORDS) for _ in range(rng.int(1, 3)))
        created = SEC_2009_01_01 + rng.int(0, 6000) * 86400 + rng.int(0, 86399)
        updated = SEC_2026_07_23 + rng.int(0, 68399)
        pushed = max(created, updated - rng.int(0, 700) * 86400 - rng.int(0, 86399))
        out.append({
            "id": rng.int(1, 1199) * 1000000 + rng.int(0, 999999),
            "name": name,
            "repo": f"{rng.pick(OWNERS)}/{name}",
            "description": _description(rng),
            "createdAt": iso_seconds(created),
            "updatedAt": iso_seconds(updated),
            "pushedAt": iso_seconds(pushed),
            "stars": rng.int(10000, 530000),
            "watchers": rng.int(200, 10000),
            "forks": rng.int(1000, 110000),
            "defaultBranch": rng.pick(BRANCHES),
        })
    return {"repositories": out}


def _uuid(rng: Rng) -> str:
    h = "".join("0123456789abcdef"[rng.int(0, 15)] for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _url(rng: Rng) -> str:
    return f"https://{rng.pick(REPO_WORDS)}.{rng.pick(DOMAINS)}/{rng.pick(REPO_WORDS)}"


def _email(rng: Rng) -> str:
    return _person(rng)[1]


def config(rng: Rng) -> dict:
    features = {}
    for name in ["darkMode", "analytics", "betaSearch", "newCheckout", "aiAssist", "offlineSync"]:
        variants = []
        for v in range(rng.int(1, 3)):
            variants.append({
                "name": ["default", "minimal", "full"][v],
                "weight": [70, 20, 10][v],
                "config": {"theme": rng.pick(["dark", "light", "auto"]), "animations": rng.chance(50),
                           "sampling": money(rng.int(1, 100))},
            })
        features[name] = {"enabled": rng.chance(50), "rollout": rng.int(0, 100), "variants": variants}
    return {
        "environment": rng.pick(["production", "staging", "development"]),
        "version": f"{rng.int(0, 9)}.{rng.int(0, 30)}.{rng.int(0, 99)}",
        "database": {
            "host": f"db.{rng.pick(DOMAINS)}",
            "port": 5432,
            "name": rng.pick(["postgres", "mysql", "mariadb"]),
            "pool": {"min": 2, "max": rng.int(10, 50), "idleTimeout": 30000},
            "replicas": [{"host": f"replica-{i + 1}.{rng.pick(DOMAINS)}", "port": 5432, "priority": i + 1}
                         for i in range(3)],
        },
        "features": features,
        "authentication": {
            "providers": [
                {"name": "oauth2", "clientId": _uuid(rng), "scopes": ["read", "write", "admin"],
                 "config": {"authUrl": _url(rng), "tokenUrl": _url(rng)}},
                {"name": "saml", "clientId": _uuid(rng), "scopes": ["read"],
                 "config": {"entryPoint": _url(rng), "cert": rng.alnum(64)}},
            ],
            "session": {"secret": rng.alnum(32), "duration": 86400, "refreshThreshold": 3600},
        },
        "permissions": {
            "roles": {
                "admin": {"permissions": ["read", "write", "delete", "manage_users", "manage_roles"], "inherits": []},
                "editor": {"permissions": ["read", "write"], "inherits": ["viewer"]},
                "viewer": {"permissions": ["read"], "inherits": []},
            },
            "groups": {
                "engineering": {"members": [_email(rng) for _ in range(5)], "roles": ["admin", "editor"]},
                "support": {"members": [_email(rng) for _ in range(3)], "roles": ["viewer"]},
            },
        },
        "observability": {
            "tracing": {
                "exporters": {
                    "otlp": {
                        "endpoint": _url(rng),
                        "headers": {"x-api-key": rng.alnum(24), "x-tenant": rng.pick(OWNERS)},
                        "retry": {"initialMs": 100, "maxMs": rng.int(1000, 9000), "multiplier": 1.5,
                                  "jitter": {"enabled": True, "ratio": money(rng.int(5, 50))}},
                    },
                    "console": {"enabled": False, "options": {}},
                },
                "sampler": {"type": "parentbased_traceidratio", "ratio": money(rng.int(1, 100))},
            },
            "metrics": {"interval": 15, "labels": {"region": rng.pick(["eu-west-1", "us-east-1"]), "tier": "gold"}},
        },
    }


DATASETS = {
    "orders": orders,
    "analytics": analytics,
    "repos": repos,
    "config": config,
}

DESCRIPTIONS = {
    "orders": "500 e-commerce orders: nested customer, 1-4 line items",
    "analytics": "2,000 flat analytics rows (tabular)",
    "repos": "100 repositories, long free-text descriptions",
    "config": "one deeply nested config object",
}


def build_all(seed: int = SEED) -> dict:
    """Every dataset, each from its own PRNG seeded with seed + its index."""
    return {name: fn(Rng(seed + i)) for i, (name, fn) in enumerate(DATASETS.items())}


def compact_json(value) -> str:
    """JSON.stringify(value) for these datasets."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def digest(value) -> str:
    return hashlib.sha256(compact_json(value).encode("utf-8")).hexdigest()[:16]


if __name__ == "__main__":
    import sys

    data = build_all()
    if len(sys.argv) > 1:  # write the datasets as JSON files into the given directory
        import os

        os.makedirs(sys.argv[1], exist_ok=True)
        for name, value in data.items():
            with open(os.path.join(sys.argv[1], name + ".json"), "w", encoding="utf-8") as f:
                f.write(compact_json(value))
    for name, value in data.items():
        print(f"{name}: {len(compact_json(value).encode('utf-8'))} B JSON, sha256 {digest(value)}")
