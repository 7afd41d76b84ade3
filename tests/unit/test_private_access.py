"""No module reads another's private attribute (issue 42, point 1), read from the AST.

An access of ``x._name`` (one leading underscore, not a dunder; ``getattr(x, "_name")``
and its kin count too) fails unless ``x`` is ``self``, ``cls`` or ``super()``; an
instance a method of the class makes itself (``cls(...)``, ``Name(...)`` in class Name,
``copy.copy(self)``: privacy is the class's, not the object's); or a module of the same
package folder imported by an alias (a sibling's private helper is the folder's
business). A named tuple's documented methods (``_replace``, ...) are public despite
their underscore.

Where the package reaches into a third-party library's internals because it offers no
public way, the access is in :data:`ALLOWED`, with its reason. asyncsports' own privates
are never allowed: add the missing public seam (a property, a method) instead; the only
exceptions are in :data:`PENDING`, each naming the change that removes it.

The checker reads sources from a dict (module name -> source), so that the tests at the
end feed it made-up modules and show that the rule fails when it is broken.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

from support.sources import package_sources

PACKAGE = "asyncsports"
ROOT = Path(__file__).parents[2]

ALLOWED: dict[tuple[str, str], str] = {
    ("asyncsports._http.transports.aiohttp", "http._retry_connection"): "aiohttp re-sends a "
    "GET once, unseen, on a closed pooled connection, and has no public switch for it: the "
    "retry engine counts every attempt instead (guarded by hasattr)",
    ("asyncsports._http.headwait", "self._connector._acquired"): "aiohttp's connector "
    "lists its acquired connections only privately: the watchdog of a header wait looks at them",
    ("asyncsports._http.headwait", "proto._waiter"): "aiohttp's ResponseHandler says only "
    "privately whether it waits for a response's headers",
    ("asyncsports._http.headwait", "proto._parser"): "aiohttp's ResponseHandler's parser "
    "changes when headers came: no public sign of progress",
    ("asyncsports._http.transports.aiohttp", "self._http.connector._acquired"): "aiohttp's "
    "connector counts its connections in use only privately (connections_in_use)",
    ("asyncsports.bus._redis", "pool._available_connections"): "redis-py keeps no public "
    "list of a pool's connections, and abort() must drop each at once",
    ("asyncsports.bus._redis", "pool._in_use_connections"): "redis-py keeps no public "
    "list of a pool's connections, and abort() must drop each at once",
    ("asyncsports.bus._redis", "conn._writer"): "redis-py keeps a connection's stream "
    "writer private, and abort() drops its asyncio transport at once",
    ("asyncsports.bus._nats", "self.nc._transport"): "nats-py keeps its client's "
    "transport private, and abort() drops the socket at once",
    ("asyncsports.bus._nats", "transport._io_writer"): "nats-py keeps its transport's "
    "stream writer private, and abort() drops the socket at once",
    ("asyncsports.testing.plugin", "config._inicache"): "pytest has no public way to "
    "default another plugin's ini option: getini's cache is it",
    ("asyncsports.__main__", "os._exit"): "the standard library's documented exit without cleanup",
    ("asyncsports._signals", "os._exit"): "the standard library's documented exit "
    "without cleanup (a second Ctrl-C)",
}
"""(module, ``x._name`` as written) -> why a third-party library leaves no public way."""

PENDING: dict[tuple[str, str], str] = {}
"""asyncsports' own privates read from outside, left only until the branch that rewrites
their module lands; :func:`test_each_allowance_is_still_used` names the stale ones."""

NAMED_TUPLE = frozenset({"_replace", "_asdict", "_make", "_fields", "_field_defaults"})
"""A named tuple's public methods and attributes (underscored so as not to clash with fields)."""


def _folder(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def _sibling_aliases(module: str, tree: ast.Module, packages: set[str]) -> set[str]:
    """The names under which ``module`` imports modules of its own folder."""
    folder = _folder(module, module in packages)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if module in packages else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                # `from a.b import c` names module a.b.c when c is a module of folder a.b.
                if source == folder and alias.name != "*":
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.rpartition(".")[0] == folder and alias.asname:
                    names.add(alias.asname)
    return names


def _own_instances(tree: ast.Module) -> set[int]:
    """The ids of the Name nodes, in a class's methods, that read a local made by the class
    itself (``x = cls(...)``, ``x = Name(...)`` in class Name)."""
    found = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        makers = {"cls", cls.name}
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            made = set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and _makes_own(node.value, makers):
                    made |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id in made:
                    found.add(id(node))
    return found


def _makes_own(value: ast.expr, makers: set[str]) -> bool:
    """Whether ``value`` makes an instance of the class: ``cls(...)``, ``Name(...)``, or a
    copy of ``self`` (``copy.copy(self)``)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name) and func.id in makers:
        return True
    copies = ast.unparse(func) in ("copy", "copy.copy")
    return copies and [ast.unparse(a) for a in value.args] == ["self"]


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


_BY_NAME = ("getattr", "hasattr", "setattr", "delattr")


def _accesses(tree: ast.Module) -> Iterator[tuple[ast.expr, str, int]]:
    """Each attribute access of ``tree`` as (owner, name, line): ``x.name``, and
    ``getattr(x, "name", ...)`` and its kin with the name written out."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            yield node.value, node.attr, node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _BY_NAME
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            yield node.args[0], node.args[1].value, node.lineno


def violations(
    sources: dict[str, str], allowed: Collection[tuple[str, str]] = ()
) -> list[tuple[str, int, str]]:
    """Each private access of ``sources`` not ``allowed``: (module, line, ``x._name``)."""
    packages = {name.rpartition(".")[0] for name in sources} & set(sources)
    found = []
    for module, source in sources.items():
        tree = ast.parse(source)
        siblings = _sibling_aliases(module, tree, packages)
        own = _own_instances(tree)
        for owner, name, line in _accesses(tree):
            if not name.startswith("_") or name.startswith("__") or name in NAMED_TUPLE:
                continue
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls", *siblings):
                continue
            if id(owner) in own or _is_super(owner):
                continue
            written = f"{ast.unparse(owner)}.{name}"
            if (module, written) not in allowed:
                found.append((module, line, written))
    return sorted(found)


def shown(found: list[tuple[str, int, str]]) -> list[str]:
    return [f"{module}:{line}: {written}" for module, line, written in found]


def test_no_module_reads_another_modules_private() -> None:
    found = violations(package_sources(ROOT, PACKAGE), {*ALLOWED, *PENDING})
    assert not found, "private attributes read from outside:\n" + "\n".join(shown(found))


def test_each_allowance_is_still_used() -> None:
    used = {(module, written) for module, _, written in violations(package_sources(ROOT, PACKAGE))}
    stale = sorted({*ALLOWED, *PENDING} - used)
    assert not stale, f"stale allowances: {stale}"


def test_each_allowance_gives_its_reason() -> None:
    assert all(len(why.split()) >= 4 for why in (*ALLOWED.values(), *PENDING.values()))


# The rule on made-up modules: it fails when broken, and lets the allowed forms pass.


def test_another_objects_private_fails() -> None:
    found = shown(violations({"pkg.a": "def f(other):\n    return other._secret\n"}))
    assert found == ["pkg.a:2: other._secret"]


def test_a_private_through_a_chain_fails() -> None:
    found = shown(
        violations({"pkg.a": "class A:\n    def f(self):\n        return self.s._token.x\n"})
    )
    assert found == ["pkg.a:3: self.s._token"]


def test_getattr_with_a_private_name_fails() -> None:
    source = "def f(o):\n    return getattr(o, '_x', None), hasattr(o, 'y'), getattr(self, '_z')\n"
    assert shown(violations({"pkg.a": source})) == ["pkg.a:2: o._x"]


def test_an_allowance_lets_exactly_its_access_pass() -> None:
    source = "def f(o, p):\n    return o._x, p._x\n"
    found = violations({"pkg.a": source}, {("pkg.a", "o._x")})
    assert shown(found) == ["pkg.a:2: p._x"]


def test_self_cls_super_and_dunders_pass() -> None:
    source = (
        "class A:\n"
        "    def f(self):\n        return self._x, super()._f()\n"
        "    @classmethod\n    def g(cls):\n        return cls._y\n"
        "def h(o):\n    return o.__class__, o.__dict__, o._replace(a=1)\n"
    )
    assert violations({"pkg.a": source}) == []


def test_an_instance_the_class_makes_itself_passes_only_in_its_methods() -> None:
    source = (
        "class A:\n"
        "    @classmethod\n    def make(cls):\n        a = cls()\n        a._open()\n"
        "    def copy(self):\n        b = A()\n        b._x = self._x\n"
        "    def twin(self):\n        c = copy.copy(self)\n        c._x = 1\n"
        "class B:\n"
        "    def f(self):\n        a = A()\n        return a._x\n"
        "def g():\n    a = A()\n    return a._x\n"
    )
    assert shown(violations({"pkg.a": source})) == ["pkg.a:15: a._x", "pkg.a:18: a._x"]


def test_a_sibling_modules_private_passes_another_folders_fails() -> None:
    sources = {
        "pkg": "",
        "pkg.sub": "",
        "pkg.sub.a": (
            "from pkg.sub import b\nimport pkg.sub.c as c\nfrom . import d\n"
            "from pkg import e\n"
            "b._one, c._two, d._three, e._four\n"
        ),
    }
    assert shown(violations(sources)) == ["pkg.sub.a:5: e._four"]
