"""One module per op (written by `opgen new`); each registers its fake kernel and autograd formula.

Every module of an op that is built is imported (under OPGEN_JIT=a,b only those), and the names in
its __all__ are re-exported. An op whose sources are newer than the build (added after the last
`pip install`) gets a stand-in that says how to build it, so the other ops keep working.
"""

import importlib
import pkgutil

from .. import _extension, loaded_ops

__all__: list = []


def _not_built(op: str):
    def stand_in(*args, **kwargs):
        raise RuntimeError(_extension.not_built_message(op))

    stand_in.__name__ = op
    return stand_in


_built = _extension.built_ops(loaded_ops)
for _module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _module_info.name not in _built:
        if loaded_ops is None:  # re-exported too: `<package>.<op>` says how to build it
            globals()[_module_info.name] = _not_built(_module_info.name)
            __all__.append(_module_info.name)
        continue
    _module = importlib.import_module(f"{__name__}.{_module_info.name}")
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
