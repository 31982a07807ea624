"""polywire.toon.pydantic: ToonPydanticModel as toon_format.pydantic (toon-format 1.2.0)
offers it, on polywire's native TOON codec.

- Against the reference (needs toon_format, Python 3.10+): the same API (names,
  signatures, classmethods), the same text from ``schema_to_toon`` and ``model_dump_toon``
  (every option) for a range of models, equal models from ``model_validate_toon``, and the
  same kind of error for bad text, bad data and bad options. The documented differences
  (array-index keys first, integral floats beyond 2**53) are pinned too.
- polywire alone (needs pydantic only): round trips, coded errors, the ImportError without
  pydantic, cheap imports, docstrings, and the stub (stubtest).
"""

from __future__ import annotations

import datetime as dt
import inspect
import subprocess
import sys
import uuid
from decimal import Decimal
from enum import Enum, IntEnum
from typing import Any, Dict, List, Literal, Optional, Union

import pytest

from conftest import ROOT

pydantic = pytest.importorskip("pydantic")

from pydantic import ConfigDict, Field, ValidationError  # noqa: E402

from polywire import PolywireError, PolywireTypeError, ToonEncodeError  # noqa: E402
from polywire import toon  # noqa: E402
from polywire.toon.pydantic import ToonPydanticModel  # noqa: E402


def reference():
    """toon_format.pydantic, or skip (toon-format 1.2.0 needs Python 3.10+)."""
    pytest.importorskip("toon_format")
    return pytest.importorskip("toon_format.pydantic")


class Color(str, Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Shape(Enum):
    ROUND = "round"
    SQUARE = "square"


def make_models(base: type) -> Dict[str, type]:
    """The same models on a given base class (polywire's or the reference's)."""

    class User(base):
        """A user of the system."""

        name: str
        age: int
        active: bool = True
        score: float = 0.5

    class Address(base):
        street: str
        city: str
        zip: Optional[str] = None

    class Person(base):
        name: str
        address: Address
        tags: List[str] = []
        nickname: Optional[str] = None

    class Item(base):
        sku: str
        qty: int
        price: Decimal

    class Order(base):
        id: uuid.UUID
        created: dt.datetime
        items: List[Item]
        note: Optional[str] = None
        color: Color = Color.RED
        level: Level = Level.LOW
        shape: Shape = Shape.ROUND

    class Aliased(base):
        model_config = ConfigDict(populate_by_name=True)

        user_name: str = Field(alias="userName")
        item_count: int = Field(0, alias="itemCount", description="How many items the user has")

    class Described(base):
        """Fields with descriptions and constraints, for prompts."""

        title: str = Field(description="The title, shown first", max_length=50)
        ratio: float = Field(1.0, ge=0, le=1, description="A ratio: between 0 and 1")
        day: dt.date
        at: dt.time
        span: dt.timedelta
        kind: Literal["a", "b"] = "a"

    class Matrix(base):
        rows: List[List[int]]
        names: List[List[str]] = []
        grid: Dict[str, List[int]] = {}
        mixed: List[Union[int, str, List[int]]] = []

    class Tree(base):
        name: str
        children: List["Tree"] = []

    class Keyed(base):
        by_name: Dict[str, Item]
        scores: Dict[str, float] = {}
        extra: Dict[str, Any] = {}

    class Nested(base):
        people: List[Person]
        orders: Optional[List[Order]] = None
        best: Optional[Person] = None

    Tree.model_rebuild()
    return {m.__name__: m for m in (User, Address, Person, Item, Order, Aliased, Described, Matrix, Tree, Keyed, Nested)}


U1 = uuid.UUID("12345678-1234-5678-1234-567812345678")
U2 = uuid.UUID("87654321-4321-8765-4321-876543218765")
T0 = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone.utc)


def instances(models: Dict[str, type]) -> List[Any]:
    """Instances of every model, the same for either base."""
    M = models
    items = [
        M["Item"](sku="A-1", qty=2, price=Decimal("9.99")),
        M["Item"](sku="B 2", qty=0, price=Decimal("1e-7")),
        M["Item"](sku="c,d", qty=-5, price=Decimal("123456789012345678901234.5")),
    ]
    person = M["Person"](name="Ada Lovelace", address=M["Address"](street="12 St James's Sq", city="London"),
                         tags=["math", "poetry", "true", "-1", ""])
    bob = M["Person"](name="Bob", address=M["Address"](street="1 Main", city="Paris", zip="75001"), nickname="B")
    order = M["Order"](id=U1, created=T0, items=items, note="rush: fragile", color=Color.GREEN, level=Level.HIGH,
                       shape=Shape.SQUARE)
    return [
        M["User"](name="Ada", age=36),
        M["User"](name="", age=-1, active=False, score=1e21),
        M["User"](name="  padded ", age=2**70, score=-0.0),
        M["User"](name="line\nbreak \"quoted\" \\ tab\t", age=0, score=1e-7),
        M["User"](name="null", age=1, score=3.0),
        M["Address"](street="1 Main", city="Paris"),
        person,
        bob,
        M["Item"](sku="x", qty=1, price=Decimal("0")),
        order,
        M["Order"](id=U2, created=dt.datetime(1999, 12, 31, 23, 59), items=[]),
        M["Aliased"](userName="ada", itemCount=3),
        M["Aliased"](user_name="bob"),
        M["Described"](title="T", ratio=0.25, day=dt.date(2020, 2, 29), at=dt.time(12, 30, 5),
                       span=dt.timedelta(days=1, seconds=3.5)),
        M["Matrix"](rows=[[1, 2], [3, 4], []], names=[["a", "b c"], ["d|e"]], grid={"x": [1], "y": []},
                    mixed=[1, "two", [3, 4]]),
        M["Matrix"](rows=[]),
        M["Tree"](name="root", children=[M["Tree"](name="a", children=[M["Tree"](name="a1")]), M["Tree"](name="b")]),
        M["Keyed"](by_name={"first": items[0], "second": items[1]}, scores={"x": 1.5, "y": 2.0},
                   extra={"k": [1, {"a": None}], "z": {}, "e": [], "n": None}),
        M["Keyed"](by_name={"only": items[0]}),
        M["Nested"](people=[person, bob], orders=[order], best=bob),
        M["Nested"](people=[]),
    ]


DUMP_OPTIONS: List[Dict[str, Any]] = [
    {},
    {"indent_size": 4},
    {"indent_size": 1},
    {"delimiter": "\t"},
    {"delimiter": "|"},
    {"delimiter": toon.Delimiter.PIPE, "indent_size": 3},
    {"by_alias": True},
    {"exclude_none": True},
    {"exclude_defaults": True},
    {"exclude_unset": True},
    {"round_trip": True},
]


@pytest.fixture(scope="module")
def pw() -> Dict[str, type]:
    return make_models(ToonPydanticModel)


@pytest.fixture(scope="module")
def ref() -> Dict[str, type]:
    return make_models(reference().ToonPydanticModel)


def pairs(pw: Dict[str, type], ref: Dict[str, type]):
    return list(zip(instances(pw), instances(ref)))


# ---------------------------------------------------------------- the API, against the reference


def test_same_api_as_the_reference():
    ref_mod = reference()
    from polywire.toon import pydantic as ours

    assert ours.__all__ == ref_mod.__all__ == ["ToonPydanticModel"]
    R = ref_mod.ToonPydanticModel
    assert issubclass(ToonPydanticModel, pydantic.BaseModel)
    for name in ["schema_to_toon", "model_dump_toon", "model_validate_toon"]:
        assert type(vars(ToonPydanticModel)[name]) is type(vars(R)[name]), name  # classmethod or function
        assert inspect.signature(getattr(ToonPydanticModel, name)) == inspect.signature(getattr(R, name)), name
    # No other public names than the reference's (and BaseModel's).
    extra = {n for n in vars(ToonPydanticModel) if not n.startswith("_")} - {n for n in vars(R) if not n.startswith("_")}
    assert not extra, extra


# ---------------------------------------------------------------- same text as toon_format.pydantic


@pytest.mark.parametrize("options", [{}, {"indent_size": 4}, {"delimiter": "\t"}, {"delimiter": "|", "indent_size": 1}],
                         ids=repr)
def test_schema_to_toon_same_text(pw, ref, options):
    for name in pw:
        ours = pw[name].schema_to_toon(**options)
        assert ours == ref[name].schema_to_toon(**options), name
        assert toon.loads(ours, indent_size=options.get("indent_size", 2)) == pw[name].model_json_schema(), name


@pytest.mark.parametrize("options", DUMP_OPTIONS, ids=repr)
def test_model_dump_toon_same_text(pw, ref, options):
    for ours, theirs in pairs(pw, ref):
        text = ours.model_dump_toon(**options)
        assert text == theirs.model_dump_toon(**options), (ours, options)


def test_model_dump_toon_include_exclude(pw, ref):
    (o, r) = pairs(pw, ref)[9]  # the order
    for kw in [{"include": {"id", "items"}}, {"exclude": {"items": {0: {"price"}}}}, {"exclude": {"note", "created"}},
               {"include": {"items": {"__all__": {"sku"}}}}]:
        assert o.model_dump_toon(**kw) == r.model_dump_toon(**kw), kw


def test_serializer_settings_same_text(pw, ref):
    """Model configuration that changes what model_dump(mode="json") gives."""

    def models(base):
        class Floats(base):
            model_config = ConfigDict(ser_json_inf_nan="null")
            values: List[float]

        class Constants(base):
            model_config = ConfigDict(ser_json_inf_nan="constants", ser_json_timedelta="float", ser_json_bytes="base64")
            values: List[float]
            span: dt.timedelta
            blob: bytes

        return [Floats(values=[float("nan"), float("inf"), -float("inf"), 1.5]),
                Constants(values=[float("nan"), float("inf"), 2.0], span=dt.timedelta(seconds=90), blob=b"\x00\xffab")]

    for ours, theirs in zip(models(ToonPydanticModel), models(reference().ToonPydanticModel)):
        assert ours.model_dump_toon() == theirs.model_dump_toon()
        assert type(ours).schema_to_toon() == type(theirs).schema_to_toon()


# ---------------------------------------------------------------- validation, against the reference


@pytest.mark.parametrize("options", [{}, {"delimiter": "\t"}, {"delimiter": "|"}, {"by_alias": True}], ids=repr)
def test_model_validate_toon_same_models(pw, ref, options):
    for ours, theirs in pairs(pw, ref):
        text = ours.model_dump_toon(**options)
        a = type(ours).model_validate_toon(text)
        b = type(theirs).model_validate_toon(text)
        assert a.model_dump() == b.model_dump(), text
        assert type(a) is type(ours) and a == ours, text
        assert type(ours).model_validate_toon(text.encode("utf-8")) == a


def test_model_validate_toon_options(pw, ref):
    text = "name: Ada\nage: 36\nactive: true\nscore: 1"
    for strict in [None, True, False]:
        a = pw["User"].model_validate_toon(text, strict=strict)
        b = ref["User"].model_validate_toon(text, strict=strict)
        assert a.model_dump() == b.model_dump()
    # by_alias / by_name and context go to model_validate.
    text = "user_name: ada\nitemCount: 2"
    assert (pw["Aliased"].model_validate_toon(text, by_name=True).model_dump()
            == ref["Aliased"].model_validate_toon(text, by_name=True).model_dump())
    assert pw["User"].model_validate_toon("name: A\nage: 1", context={"x": 1}).age == 1


def errors_of(call) -> Any:
    with pytest.raises(ValidationError) as info:
        call()
    return [{k: v for k, v in e.items() if k != "url"} for e in info.value.errors()]


@pytest.mark.parametrize(
    "model,text,kwargs",
    [
        ("User", "name: Ada\nage: old", {}),
        ("User", "name: Ada", {}),
        ("User", "name: 1\nage: 2", {"strict": True}),  # a number where a str is due
        ("User", 'name: Ada\nage: "36"', {"strict": True}),
        ("Order", "id: 1\ncreated: now\nitems[1]{sku,qty,price}:\n  a,x,1", {}),
        ("Order", f"id: {U1}\ncreated: 2024-01-01T00:00:00\nitems[0]:", {"strict": True}),  # str dates in strict mode
        ("Person", "name: A\naddress: here", {}),
        ("User", "[2]: 1,2", {}),  # a list where the model is due
        ("User", "[0]:", {}),
        ("User", "hello", {}),  # a string
        ("User", "", {}),  # an empty document is an empty object
        ("Described", "title: " + "x" * 51 + "\nday: 2020-01-01\nat: 12:00\nspan: P1D", {}),
    ],
)
def test_validation_errors_same(pw, ref, model, text, kwargs):
    ours = errors_of(lambda: pw[model].model_validate_toon(text, **kwargs))
    theirs = errors_of(lambda: ref[model].model_validate_toon(text, **kwargs))
    assert ours == theirs


BAD_TEXTS = [
    "name: Ada\nname: Bob",  # duplicate key (non-strict: last wins)
    "tags[3]: a,b",  # declared length (non-strict: advisory)
    "name: Ada\n   age: 1",  # indentation
    'name: "Ada',  # unterminated string
    'name: "\\q"',  # bad escape
    "items[2]{sku,qty,price}:\n  a,1,2",  # missing row
    "x: 1\n\ty: 2",  # tab indentation
    "- 1\nname: x",  # mixed root
    "name: A\n  age: 2",  # over-indented
    b"name: \xff",  # invalid UTF-8
]


@pytest.mark.parametrize("text", BAD_TEXTS, ids=repr)
@pytest.mark.parametrize("strict", [None, True, False])
def test_bad_text_same_kind_of_error(pw, ref, text, strict):
    """Where the reference's decoder fails, ours does (a polywire ToonDecodeError, a
    ValueError with a code); where it decodes (non-strict), ours decodes the same data,
    and the models or validation errors are equal."""
    import toon_format

    def attempt(model):
        try:
            return "ok", model.model_validate_toon(text, strict=strict).model_dump()
        except ValidationError as e:
            return "invalid", [{k: v for k, v in d.items() if k != "url"} for d in e.errors()]
        except ValueError as e:
            return "decode", e

    model = "User" if "item" not in str(text) else "Order"
    ours = attempt(pw[model])
    theirs = attempt(ref[model])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "decode":
        assert isinstance(theirs[1], toon_format.ToonDecodeError)
        e = ours[1]
        assert isinstance(e, toon.ToonDecodeError) and isinstance(e, PolywireError)
        assert e.code.startswith("TOON_") and e.line is not None, e
    else:
        assert ours[1] == theirs[1]


def test_text_of_the_wrong_type(pw, ref):
    for bad in [None, 3, ["name: A"]]:
        with pytest.raises(TypeError):
            ref["User"].model_validate_toon(bad)
        with pytest.raises(TypeError) as info:
            pw["User"].model_validate_toon(bad)
        assert isinstance(info.value, PolywireTypeError) and info.value.code == "TOON_INVALID_ARGUMENT"


@pytest.mark.parametrize(
    "options",
    [{"indent_size": 0}, {"indent_size": -2}, {"indent_size": True}, {"indent_size": "2"}, {"indent_size": 2.0},
     {"indent_size": None}, {"delimiter": ";"}, {"delimiter": ""}, {"delimiter": None}, {"delimiter": 1},
     {"delimiter": ";", "indent_size": 0}],
    ids=repr,
)
def test_bad_options_same_errors(pw, ref, options):
    for call in [lambda m: m.model_dump_toon(**options), lambda m: type(m).schema_to_toon(**options)]:
        with pytest.raises((TypeError, ValueError)) as theirs:
            call(ref["User"](name="A", age=1))
        with pytest.raises((TypeError, ValueError)) as ours:
            call(pw["User"](name="A", age=1))
        assert isinstance(ours.value, TypeError) == isinstance(theirs.value, TypeError)
        assert str(ours.value) == str(theirs.value)
        assert isinstance(ours.value, (ToonEncodeError, PolywireTypeError)) and ours.value.code == "TOON_INVALID_ARGUMENT"


def test_model_dump_kwargs_errors_as_the_reference(pw, ref):
    for kw in [{"mode": "python"}, {"nope": 1}]:
        with pytest.raises(TypeError) as theirs:
            ref["User"](name="A", age=1).model_dump_toon(**kw)
        with pytest.raises(TypeError) as ours:
            pw["User"](name="A", age=1).model_dump_toon(**kw)
        assert str(ours.value) == str(theirs.value)


def random_models(base: type):
    class Row(base):
        a: str
        b: float
        c: Optional[int] = None

    class Doc(base):
        name: str
        tags: List[str]
        rows: List[Row]
        extra: Dict[str, Any]

    return Row, Doc


def test_same_text_on_random_values():
    """Strings of any characters (quoting, escapes), any floats, free-form JSON: the same
    text, and the same models or validation errors from it (hypothesis)."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    import re

    R = reference().ToonPydanticModel
    (PRow, PDoc), (RRow, RDoc) = random_models(ToonPydanticModel), random_models(R)
    index = re.compile(r"0|[1-9][0-9]*")  # array-index keys: a documented difference
    keys = st.text(max_size=6).filter(lambda k: not index.fullmatch(k))
    floats = st.floats().filter(lambda f: not (f.is_integer() and 2**53 <= abs(f) < 1e21))
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | floats | st.text(max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(keys, c, max_size=3), max_leaves=10)

    def outcome(model: Any, text: str) -> str:
        try:
            return repr(model.model_validate_toon(text).model_dump(mode="json"))
        except ValidationError as e:
            return repr([{k: v for k, v in d.items() if k != "url"} for d in e.errors()])

    @hypothesis.settings(max_examples=200, deadline=None, suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(st.text(max_size=10), st.lists(st.text(max_size=5), max_size=4),
                      st.lists(st.tuples(st.text(max_size=5), floats, st.none() | st.integers()), max_size=3),
                      st.dictionaries(keys, json_values, max_size=4), st.sampled_from([",", "\t", "|"]))
    def check(name, tags, rows, extra, delimiter):
        ours = PDoc(name=name, tags=tags, extra=extra, rows=[PRow(a=a, b=b, c=c) for a, b, c in rows])
        theirs = RDoc(name=name, tags=tags, extra=extra, rows=[RRow(a=a, b=b, c=c) for a, b, c in rows])
        text = ours.model_dump_toon(delimiter=delimiter)
        assert text == theirs.model_dump_toon(delimiter=delimiter)
        assert outcome(PDoc, text) == outcome(RDoc, text)

    check()


# ---------------------------------------------------------------- the documented differences


def test_documented_differences(pw, ref):
    """Where polywire.toon.dumps writes what @toon-format/toon writes (see the module
    docstring): array-index keys first, integral floats beyond 2**53 in JavaScript's form.
    Both texts validate to the same model."""

    def models(base):
        class Odd(base):
            by_id: Dict[int, str]
            big: float

        return Odd

    O, R = models(ToonPydanticModel), models(reference().ToonPydanticModel)
    values = {"by_id": {10: "ten", 2: "two"}, "big": float(2**60)}
    ours, theirs = O(**values).model_dump_toon(), R(**values).model_dump_toon()
    assert ours == 'by_id:\n  "2": two\n  "10": ten\nbig: 1152921504606847000'
    assert theirs == 'by_id:\n  "10": ten\n  "2": two\nbig: 1152921504606846976'
    assert O.model_validate_toon(ours) == O.model_validate_toon(theirs) == O(**values)
    assert R.model_validate_toon(ours).model_dump() == O(**values).model_dump()
    # A number beyond a double's range is a string for polywire.toon.loads (as for the
    # reference), which pydantic may accept; toon-format's decoder refuses it.
    import toon_format

    text = "name: A\nage: 1\nscore: 1e999"
    assert toon.loads(text)["score"] == "1e999"
    assert pw["User"].model_validate_toon(text).score == float("inf")
    with pytest.raises(toon_format.ToonDecodeError):
        ref["User"].model_validate_toon(text)
    with pytest.raises(ValidationError):
        pw["User"].model_validate_toon("name: A\nage: 1e999")


# ---------------------------------------------------------------- polywire alone


def test_round_trips(pw):
    for model in instances(pw):
        for options in DUMP_OPTIONS:
            if options.get("exclude_defaults") or options.get("exclude_unset") or options.get("exclude_none"):
                continue  # required fields may be left out
            text = model.model_dump_toon(**options)
            kw = {"by_alias": True} if options.get("by_alias") else {}
            if options.get("indent_size", 2) != 2:
                # model_validate_toon reads 2-space indentation, as in toon-format.
                data = toon.loads(text, indent_size=options["indent_size"])
                assert type(model).model_validate(data, **kw) == model, (text, options)
                continue
            assert type(model).model_validate_toon(text, **kw) == model, (text, options)


def test_dump_is_dumps_of_model_dump(pw):
    for model in instances(pw):
        assert model.model_dump_toon() == toon.dumps(model.model_dump(mode="json"))
        assert model.model_dump_toon(delimiter="|", indent_size=4, by_alias=True) == toon.dumps(
            model.model_dump(mode="json", by_alias=True), delimiter="|", indent_size=4)
    assert pw["Order"].schema_to_toon() == toon.dumps(pw["Order"].model_json_schema())


def test_readable_text():
    class Item(ToonPydanticModel):
        sku: str
        qty: int

    class Cart(ToonPydanticModel):
        owner: str
        items: List[Item]

    cart = Cart(owner="Ada", items=[Item(sku="A1", qty=2), Item(sku="B2", qty=1)])
    assert cart.model_dump_toon() == "owner: Ada\nitems[2]{sku,qty}:\n  A1,2\n  B2,1"
    assert cart.model_dump_toon(delimiter="\t", indent_size=4) == "owner: Ada\nitems[2\t]{sku\tqty}:\n    A1\t2\n    B2\t1"
    assert Cart.model_validate_toon("owner: Ada\nitems[1]{sku,qty}:\n  A1,2") == Cart(owner="Ada", items=[Item(sku="A1", qty=2)])
    assert Cart.schema_to_toon().startswith('"$defs":\n  Item:\n    properties[2:]{title,type}:\n')


def test_decode_errors_carry_codes(pw):
    with pytest.raises(toon.ToonDecodeError) as info:
        pw["User"].model_validate_toon("name: Ada\nname: Bob")
    e = info.value
    assert isinstance(e, ValueError) and e.code == "TOON_DUPLICATE_KEY" and e.line == 2
    # Non-strict decoding takes the last value; strict=False goes to pydantic as well.
    assert pw["User"].model_validate_toon("name: Ada\nname: Bob\nage: 1", strict=False).name == "Bob"
    with pytest.raises(toon.ToonDecodeError) as info:
        pw["User"].model_validate_toon("age[2]: 1", strict=None)
    assert info.value.code == "TOON_LENGTH_MISMATCH"
    with pytest.raises(ValidationError):
        pw["User"].model_validate_toon("age[2]: 1", strict=False)
    with pytest.raises(ValidationError):
        pw["User"].model_validate_toon('name: Ada\nage: "1"', strict=True)


def test_subclass_returns_its_own_type(pw):
    class Admin(pw["User"]):
        level: int = 1

    a = Admin.model_validate_toon("name: A\nage: 2\nlevel: 3")
    assert type(a) is Admin and a.level == 3


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def assert_prints_ok(code: str) -> None:
    """Runs `code` in a fresh interpreter, which must print just "ok"."""
    r = run_python(code)
    assert r.stdout.strip() == "ok", r.stderr


def test_import_without_pydantic_is_a_clear_import_error():
    code = (
        "import sys\n"
        "sys.modules['pydantic'] = None  # as if pydantic were not installed\n"
        "import polywire.toon as toon\n"
        "assert toon.loads(toon.dumps({'a': 1})) == {'a': 1}\n"
        "for stmt in ['import polywire.toon.pydantic', 'from polywire.toon.pydantic import ToonPydanticModel',\n"
        "             'from polywire.toon import pydantic']:\n"
        "    try:\n"
        "        exec(stmt)\n"
        "    except ImportError as e:\n"
        "        assert 'pip install pydantic' in str(e), e\n"
        "    else:\n"
        "        raise SystemExit(stmt + ' did not fail')\n"
        "assert not hasattr(toon, 'pydantic')\n"
        "print('ok')\n"
    )
    assert_prints_ok(code)


def test_imports_stay_cheap_and_the_submodule_loads_on_use():
    code = (
        "import sys, polywire, polywire.toon\n"
        "assert 'pydantic' not in sys.modules and 'polywire.toon.pydantic' not in sys.modules\n"
        "m = polywire.toon.pydantic\n"
        "import polywire.toon.pydantic as p\n"
        "from polywire.toon.pydantic import ToonPydanticModel\n"
        "assert m is p and p.ToonPydanticModel is ToonPydanticModel and p.__name__ == 'polywire.toon.pydantic'\n"
        "try:\n    polywire.toon.nope\nexcept AttributeError as e:\n    assert 'nope' in str(e)\n"
        "else:\n    raise SystemExit('no AttributeError')\n"
        "print('ok')\n"
    )
    assert_prints_ok(code)


def test_every_public_name_has_a_docstring():
    """As tests-py/test_docs.py does for the format modules."""
    from polywire.toon import pydantic as mod

    assert len((mod.__doc__ or "").strip()) > 100
    for name in mod.__all__:
        obj = getattr(mod, name)
        assert len((obj.__doc__ or "").strip()) >= 10, name
        for attr in ["schema_to_toon", "model_dump_toon", "model_validate_toon"]:
            assert len((getattr(obj, attr).__doc__ or "").strip()) >= 10, attr


def test_stub_matches_the_module():
    """tests-py/test_stubs.py runs stubtest on `polywire`, whose walk does not reach a
    submodule of the module polywire.toon: check this one by name."""
    pytest.importorskip("mypy")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "polywire.toon.pydantic", "--mypy-config-file", "/dev/null"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
